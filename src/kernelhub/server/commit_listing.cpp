// SPDX-License-Identifier: Apache-2.0
// `GET /api/{T}/{repo}/commits/{rev}?p=N`, what huggingface_hub's list_repo_commits pages
// through: 50 commits a page, newest first, the next page in a `Link` header.
#include <charconv>
#include <ctime>

#include <fmt/format.h>

#include <kernelhub/server/handlers.hpp>
#include <kernelhub/server/hub_timestamp.hpp>
#include <kernelhub/server/repository_log.hpp>

namespace kernelhub::server::handlers {

namespace {

using nlohmann::json;

constexpr std::size_t k_commits_page = 50;

}  // namespace

HubExpected<HttpResponse> repo_commits(Context& ctx, const RepoId& id,
                                       const std::string& revision) {
  const OpenRepository repo = KH_HUB_TRY(open_for_read(ctx, id));
  KH_HUB_TRY(check_revision(revision));
  std::size_t page = 0;
  if (const auto text = ctx.target.param("p")) {
    const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), page);
    if (text->empty() || error != std::errc() || end != text->data() + text->size() ||
        page > 100'000) {
      return bad_request(fmt::format("invalid page \"{}\": expected a non-negative integer",
                                     *text));
    }
  }
  const std::string sha = KH_HUB_TRY(resolve_revision(repo.git.get(), revision));
  bool truncated = false;
  const auto commits = KH_HUB_TRY(
      list_commits(repo.git.get(), sha, (page + 1) * k_commits_page, &truncated));
  json body = json::array();
  for (std::size_t i = page * k_commits_page; i < commits.size(); ++i) {
    const CommitLogEntry& commit = commits[i];
    std::string message = commit.title;
    if (!commit.body.empty()) {
      message += "\n\n" + commit.body;
    }
    body.push_back({{"id", commit.sha},
                    {"title", commit.title},
                    {"message", message},
                    {"date", hub_timestamp(commit.time)},
                    {"authors", json::array({{{"user", commit.author}}})}});
  }
  HttpResponse response = json_response(200, body);
  if (truncated) {
    response.set_header("Link", fmt::format("<{}{}?p={}>; rel=\"next\"", ctx.request.base_url,
                                            ctx.target.path, page + 1));
  }
  return response;
}

}  // namespace kernelhub::server::handlers
