// SPDX-License-Identifier: Apache-2.0
// Tree entries as the Hub lists them (hub-api.md §2.3), with `expand=true`'s details, and
// `POST /api/{T}/{repo}/paths-info/{rev}`, which huggingface_hub's get_paths_info (and
// HfFileSystem) send as a form: `paths=a&paths=b&expand=True`.
#include <ctime>

#include <fmt/format.h>

#include <kernelhub/server/handlers.hpp>
#include <kernelhub/server/hub_timestamp.hpp>
#include <kernelhub/server/repository_history.hpp>
#include <kernelhub/server/repository_reader.hpp>

namespace kernelhub::server::handlers {

namespace {

using nlohmann::json;

// The Hub answers at most this many paths per request.
constexpr std::size_t k_max_paths = 1000;

// The paths and the expand flag of a paths-info body: a form (what huggingface_hub sends) or
// a JSON object {"paths": [...], "expand": bool}.
struct PathsQuery {
  std::vector<std::string> paths;
  bool expand = false;
};

HubExpected<PathsQuery> parse_paths_query(const Context& ctx) {
  PathsQuery query;
  const std::string_view body = ctx.request.body;
  const auto type = ctx.request.header("content-type");
  if (type && type->starts_with("application/json")) {
    const json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
    const auto paths = parsed.is_object() ? parsed.find("paths") : parsed.end();
    if (!parsed.is_object() || paths == parsed.end() || !paths->is_array()) {
      return bad_request("malformed paths-info body: \"paths\" must be a list of strings");
    }
    for (const auto& path : *paths) {
      if (!path.is_string()) {
        return bad_request("malformed paths-info body: \"paths\" must be a list of strings");
      }
      query.paths.push_back(path.get<std::string>());
    }
    const auto expand = parsed.find("expand");
    query.expand = expand != parsed.end() && expand->is_boolean() && expand->get<bool>();
    return query;
  }
  // A form body is a query string: the target parser decodes it the same way.
  const RequestTarget form = KH_HUB_TRY(parse_request_target("/?" + std::string(body)));
  for (const auto& [name, value] : form.query) {
    if (name == "paths") {
      query.paths.push_back(value);
    }
  }
  query.expand = form.flag("expand");
  return query;
}

}  // namespace

nlohmann::json tree_entries(git_repository* repo, const std::string& commit,
                            const std::vector<TreeItem>& items, bool expand) {
  std::map<std::string, CommitSummary> last;
  if (expand) {
    std::vector<std::string> paths;
    paths.reserve(items.size());
    for (const auto& item : items) {
      paths.push_back(item.path);
    }
    last = last_commits(repo, commit, paths);
  }
  json entries = json::array();
  for (const auto& item : items) {
    json entry = {{"type", item.is_directory ? "directory" : "file"},
                  {"oid", item.oid},
                  {"size", item.is_directory ? 0 : item.lfs ? item.lfs->size : item.size},
                  {"path", item.path}};
    if (item.lfs) {
      // `oid` stays the pointer blob's sha1; the content's sha256 is `lfs.oid`.
      entry["lfs"] = {{"oid", item.lfs->oid}, {"size", item.lfs->size}, {"pointerSize", item.size}};
    }
    if (expand) {
      if (const auto it = last.find(item.path); it != last.end()) {
        entry["lastCommit"] = {{"id", it->second.sha},
                               {"title", it->second.title},
                               {"date", hub_timestamp(it->second.time)}};
      }
      if (!item.is_directory) {
        // This server scans nothing; the client reads all three keys when the object is
        // there, and "unscanned" is what the Hub says of a file it has not scanned yet.
        entry["securityFileStatus"] = {
            {"status", "unscanned"}, {"avScan", nullptr}, {"pickleImportScan", nullptr}};
      }
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

HubExpected<HttpResponse> paths_info(Context& ctx, const RepoId& id,
                                     const std::string& revision) {
  const OpenRepository repo = KH_HUB_TRY(open_for_read(ctx, id));
  KH_HUB_TRY(check_revision(revision));
  const PathsQuery query = KH_HUB_TRY(parse_paths_query(ctx));
  if (query.paths.size() > k_max_paths) {
    return bad_request(fmt::format("too many paths: {}, at most {} per request",
                                   query.paths.size(), k_max_paths));
  }
  const std::string sha = KH_HUB_TRY(resolve_revision(repo.git.get(), revision));
  std::vector<TreeItem> items;
  for (std::string path : query.paths) {
    while (path.size() > 1 && path.back() == '/') {
      path.pop_back();
    }
    KH_HUB_TRY(check_repo_path(path));
    // The Hub leaves out paths that do not exist rather than failing the whole request.
    auto item = path_item(repo.git.get(), sha, path);
    if (item) {
      items.push_back(std::move(*item));
    } else if (item.error().status != 404) {
      return tl::unexpected(item.error());
    }
  }
  return json_response(200, tree_entries(repo.git.get(), sha, items, query.expand));
}

}  // namespace kernelhub::server::handlers
