// SPDX-License-Identifier: Apache-2.0
// Pull requests as the Hub makes them (issue 15 item 2): a commit with `create_pr=1` goes to a
// new `refs/pr/<N>` started at the target branch's head (or at `parentCommit`), with a
// discussion that records it; commits to `refs/pr/<N>` add to it; merging makes a merge
// commit on the target branch. The ref and the discussion list change under the repository's
// write mutex, and a failure after the ref was made takes the ref away again.
#include <fmt/format.h>

#include <kernelhub/server/discussion_store.hpp>
#include <kernelhub/server/handlers.hpp>
#include <kernelhub/server/repository_merge.hpp>
#include <kernelhub/server/repository_reader.hpp>
#include <kernelhub/server/repository_writer.hpp>

namespace kernelhub::server::handlers {

namespace {

using nlohmann::json;

HttpResponse commit_answer(const Context& ctx, const RepoId& id, const std::string& sha,
                           const CommitRequest& request, const json& pull_request_url) {
  return json_response(
      200, {{"success", true},
            {"commitOid", sha},
            {"commitUrl", fmt::format("{}/commit/{}", repo_url(ctx, id), sha)},
            {"commitMessage", request.summary},
            {"commitDescription", request.description},
            {"pullRequestUrl", pull_request_url}});
}

}  // namespace

std::string discussion_url(const Context& ctx, const RepoId& id, long num) {
  return fmt::format("{}/discussions/{}", repo_url(ctx, id), num);
}

std::optional<long> pull_request_number(std::string_view ref) {
  constexpr std::string_view k_prefix = "refs/pr/";
  if (!ref.starts_with(k_prefix) || ref.size() == k_prefix.size() || ref.size() > 20) {
    return std::nullopt;
  }
  long num = 0;
  for (const char c : ref.substr(k_prefix.size())) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    num = num * 10 + (c - '0');
  }
  return num > 0 ? std::optional(num) : std::nullopt;
}

HubExpected<HttpResponse> open_pull_request(Context& ctx, const RepoId& id,
                                            const OpenRepository& repo,
                                            const std::string& branch_ref,
                                            const CommitRequest& request) {
  git_repository* git = repo.git.get();
  const DiscussionStore store(ctx.store.directory(id));
  json all = KH_HUB_TRY(store.load());
  const long num = next_discussion_number(all);
  const std::string ref = fmt::format("refs/pr/{}", num);
  // The PR starts where the client says its files were based (parentCommit), else at the
  // branch head; the commit on top of it is the PR's first.
  const std::string start = KH_HUB_TRY(
      resolve_revision(git, request.parent_commit ? *request.parent_commit : branch_ref));
  KH_HUB_TRY(create_ref(git, ref, start));
  CommitRequest on_ref = request;
  on_ref.parent_commit.reset();
  auto sha = commit_to_branch(git, ref, on_ref);
  if (!sha) {
    (void)delete_ref(git, ref);
    return tl::unexpected(sha.error());
  }
  json discussion = new_discussion(num, request.summary, k_discussion_author, branch_ref);
  discussion["status"] = "open";
  if (!request.description.empty()) {
    discussion["events"].push_back(comment_event(request.description, k_discussion_author));
  }
  discussion["events"].push_back(commit_event(request.summary, *sha, k_discussion_author));
  all["discussions"].push_back(std::move(discussion));
  if (auto saved = store.save(all); !saved) {
    (void)delete_ref(git, ref);
    return tl::unexpected(saved.error());
  }
  queue_variant_checks(ctx, id, *sha);
  return commit_answer(ctx, id, *sha, request, discussion_url(ctx, id, num));
}

HubExpected<HttpResponse> push_to_pull_request(Context& ctx, const RepoId& id,
                                               const OpenRepository& repo,
                                               const std::string& pr_ref,
                                               const CommitRequest& request) {
  const auto num = pull_request_number(pr_ref);
  const DiscussionStore store(ctx.store.directory(id));
  json all = KH_HUB_TRY(store.load());
  json* discussion = num ? find_discussion(all, *num) : nullptr;
  if (discussion == nullptr || !discussion->value("isPullRequest", false)) {
    return revision_not_found(pr_ref);
  }
  const std::string status = discussion->value("status", "");
  if (status != "open" && status != "draft") {
    return bad_request(fmt::format("pull request #{} is {}: reopen it before pushing to \"{}\"",
                                   *num, status, pr_ref));
  }
  const std::string sha = KH_HUB_TRY(commit_to_branch(repo.git.get(), pr_ref, request));
  queue_variant_checks(ctx, id, sha);
  (*discussion)["events"].push_back(commit_event(request.summary, sha, k_discussion_author));
  KH_HUB_TRY(store.save(all));
  return commit_answer(ctx, id, sha, request, nullptr);
}

HubExpected<json> merge_pull_request(Context& ctx, const RepoId& id, json& discussion) {
  const long num = discussion.value("num", 0L);
  const std::string status = discussion.value("status", "");
  if (status != "open") {
    return bad_request(fmt::format(
        "pull request #{} is {}: only an open pull request can be merged{}", num, status,
        status == "draft" ? " (change its status to open first)" : ""));
  }
  const OpenRepository repo = KH_HUB_TRY(ctx.store.open(id));
  const std::string base = discussion.value("base", "refs/heads/main");
  const std::string message =
      fmt::format("Merge pull request #{}: {}\n", num, discussion.value("title", ""));
  const MergeOutcome merged =
      KH_HUB_TRY(merge_refs(repo.git.get(), base, fmt::format("refs/pr/{}", num), message));
  if (!merged.conflicts.empty()) {
    std::string names;
    for (const auto& path : merged.conflicts) {
      names += (names.empty() ? "\"" : ", \"") + path + "\"";
    }
    return hub_fail(409, "", fmt::format("pull request #{} conflicts with \"{}\" in {}", num,
                                         base, names));
  }
  discussion["status"] = "merged";
  discussion["mergeCommitId"] = merged.commit;
  queue_variant_checks(ctx, id, merged.commit);
  return status_event("merged", k_discussion_author);
}

}  // namespace kernelhub::server::handlers
