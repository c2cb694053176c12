// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/repository_log.hpp>

#include <fmt/format.h>

#include <kernelhub/server/git_handles.hpp>

namespace kernelhub::server {

namespace {

struct WalkFree {
  void operator()(git_revwalk* walk) const { git_revwalk_free(walk); }
};

tl::unexpected<HubError> walk_failure(const std::string& what) {
  return hub_fail(500, "", fmt::format("cannot {}: {}", what, git::last_error()));
}

}  // namespace

HubExpected<std::vector<CommitLogEntry>> list_commits(git_repository* repo,
                                                      const std::string& sha, std::size_t limit,
                                                      bool* truncated) {
  git_oid start;
  if (git_oid_fromstr(&start, sha.c_str()) != 0) {
    return revision_not_found(sha);
  }
  git_revwalk* raw = nullptr;
  if (git_revwalk_new(&raw, repo) != 0) {
    return walk_failure("start a history walk");
  }
  const std::unique_ptr<git_revwalk, WalkFree> walk(raw);
  // Topological first: commits made within one second tie on time, and a parent must still
  // come after its children.
  git_revwalk_sorting(walk.get(), GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
  if (git_revwalk_push(walk.get(), &start) != 0) {
    return revision_not_found(sha);
  }
  std::vector<CommitLogEntry> entries;
  if (truncated != nullptr) {
    *truncated = false;
  }
  git_oid oid;
  while (git_revwalk_next(&oid, walk.get()) == 0) {
    if (entries.size() == limit) {
      if (truncated != nullptr) {
        *truncated = true;
      }
      break;
    }
    git_commit* raw_commit = nullptr;
    if (git_commit_lookup(&raw_commit, repo, &oid) != 0) {
      return walk_failure(fmt::format("read commit {}", git::to_hex(oid)));
    }
    const git::Commit commit(raw_commit);
    const char* summary = git_commit_summary(commit.get());
    const git_signature* author = git_commit_author(commit.get());
    const char* body = git_commit_body(commit.get());
    entries.push_back({git::to_hex(oid), static_cast<std::int64_t>(git_commit_time(commit.get())),
                       summary != nullptr ? summary : "",
                       author != nullptr && author->name != nullptr ? author->name : "",
                       body != nullptr ? body : ""});
  }
  return entries;
}

HubExpected<std::string> merge_base(git_repository* repo, const std::string& a,
                                    const std::string& b) {
  git_oid one;
  git_oid two;
  if (git_oid_fromstr(&one, a.c_str()) != 0) {
    return revision_not_found(a);
  }
  if (git_oid_fromstr(&two, b.c_str()) != 0) {
    return revision_not_found(b);
  }
  git_oid base;
  const int error = git_merge_base(&base, repo, &one, &two);
  if (error == GIT_ENOTFOUND) {
    return revision_not_found(fmt::format("merge base of {} and {}", a, b));
  }
  if (error != 0) {
    return walk_failure("find a merge base");
  }
  return git::to_hex(base);
}

HubExpected<std::optional<std::string>> first_parent(git_repository* repo,
                                                     const std::string& sha) {
  git_oid oid;
  git_commit* raw = nullptr;
  if (git_oid_fromstr(&oid, sha.c_str()) != 0 || git_commit_lookup(&raw, repo, &oid) != 0) {
    return revision_not_found(sha);
  }
  const git::Commit commit(raw);
  if (git_commit_parentcount(commit.get()) == 0) {
    return std::optional<std::string>{};
  }
  return std::optional<std::string>{git::to_hex(*git_commit_parent_id(commit.get(), 0))};
}

}  // namespace kernelhub::server
