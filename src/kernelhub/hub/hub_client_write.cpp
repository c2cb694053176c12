// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/hub_client.hpp>

#include <fmt/format.h>

#include <kernelhub/hub/client_support.hpp>
#include <kernelhub/hub/content_hash.hpp>
#include <kernelhub/hub/error_mapping.hpp>
#include <kernelhub/hub/hub_url.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::hub {

namespace {

using nlohmann::json;

constexpr std::size_t k_preupload_batch = 256;

// Refuses what huggingface_hub refuses in a path_in_repo: absolute paths, `.`/`..` parts
// and `.git` or `.cache` parts (they would be hidden or dangerous on the Hub).
HubResult<std::string> checked_path(std::string_view path) {
  std::string cleaned(path);
  while (cleaned.starts_with("./")) {
    cleaned.erase(0, 2);
  }
  while (cleaned.starts_with("/")) {
    cleaned.erase(0, 1);
  }
  std::size_t start = 0;
  while (start <= cleaned.size()) {
    auto end = cleaned.find('/', start);
    if (end == std::string::npos) {
      end = cleaned.size();
    }
    const std::string_view part = std::string_view(cleaned).substr(start, end - start);
    if (part == "." || part == ".." || part == ".git" || part == ".cache") {
      return hub_fail(ErrorKind::invalid_argument,
                      fmt::format("invalid path in repo \"{}\": it has a \"{}\" part", path, part));
    }
    start = end + 1;
  }
  if (cleaned.empty() || cleaned.back() == '/') {
    return hub_fail(ErrorKind::invalid_argument,
                    fmt::format("invalid path in repo \"{}\": it names no file", path));
  }
  return cleaned;
}

std::string query(CreatePr create_pr) { return create_pr == CreatePr::yes ? "?create_pr=1" : ""; }

}  // namespace

HubResult<std::string> HubClient::create_repo(const RepoRef& repo, Visibility visibility,
                                              ExistOk exist_ok) const {
  json body = {{"name", std::string(repo.id.name())}};
  body["organization"] = repo.id.owner().empty() ? json(nullptr) : json(std::string(repo.id.owner()));
  if (repo.type != RepoType::model) {
    body["type"] = std::string(repo_type_name(repo.type));
  }
  // 1.x clients send `visibility`, 0.x ones `private`: servers read one or the other.
  body["visibility"] = visibility == Visibility::private_repo ? "private" : "public";
  body["private"] = visibility == Visibility::private_repo;
  const auto what = fmt::format("create repository {}", repo.id.str());
  auto response = KH_HUB_TRY(send_json("POST", m_endpoint.url + "/api/repos/create", body.dump()));
  if (response.status == 409 && exist_ok == ExistOk::yes) {
    const auto answer = json::parse(response.body, nullptr, false);
    const auto url = detail::string_field(answer, "url");
    return url.empty() ? fmt::format("{}/{}{}", m_endpoint.url, repo_type_url_prefix(repo.type),
                                     repo.id.str())
                       : url;
  }
  response = KH_HUB_TRY(detail::require_success(std::move(response), what));
  return detail::string_field(KH_HUB_TRY(detail::json_body(response, what)), "url");
}

HubResult<void> HubClient::create_branch(const RepoRef& repo, std::string_view branch,
                                         std::optional<std::string_view> starting_point,
                                         ExistOk exist_ok) const {
  json body = json::object();
  if (starting_point) {
    body["startingPoint"] = std::string(*starting_point);
  }
  const auto url = fmt::format("{}/branch/{}", api_repo_url(m_endpoint.url, repo), url_quote(branch, ""));
  auto response = KH_HUB_TRY(send_json("POST", url, body.dump()));
  if (response.status == 409 && exist_ok == ExistOk::yes) {
    return {};
  }
  KH_HUB_TRY(detail::require_success(std::move(response),
                                 fmt::format("create branch \"{}\" in {}", branch, repo.id.str())));
  return {};
}

HubResult<void> HubClient::create_tag(const RepoRef& repo, std::string_view revision,
                                      std::string_view tag, std::string_view message) const {
  json body = {{"tag", std::string(tag)}};
  if (!message.empty()) {
    body["message"] = std::string(message);
  }
  const auto url = fmt::format("{}/tag/{}", api_repo_url(m_endpoint.url, repo), url_quote(revision, ""));
  auto response = KH_HUB_TRY(send_json("POST", url, body.dump()));
  KH_HUB_TRY(detail::require_success(std::move(response),
                                 fmt::format("create tag \"{}\" in {}", tag, repo.id.str())));
  return {};
}

HubResult<std::vector<PreuploadAnswer>> HubClient::preupload(const RepoRef& repo,
                                                             std::string_view revision,
                                                             const std::vector<PreuploadFile>& files,
                                                             CreatePr create_pr) const {
  const auto url = fmt::format("{}/preupload/{}{}", api_repo_url(m_endpoint.url, repo),
                               url_quote(revision, ""), query(create_pr));
  const auto what = fmt::format("preupload to {} at \"{}\"", repo.id.str(), revision);
  std::vector<PreuploadAnswer> answers;
  for (std::size_t first = 0; first < files.size(); first += k_preupload_batch) {
    json list = json::array();
    for (std::size_t i = first; i < std::min(files.size(), first + k_preupload_batch); ++i) {
      list.push_back({{"path", KH_HUB_TRY(checked_path(files[i].path))},
                      {"sample", base64_encode(std::string_view(files[i].sample).substr(0, 512))},
                      {"size", files[i].size}});
    }
    auto response = KH_HUB_TRY(detail::require_success(
        KH_HUB_TRY(send_json("POST", url, json{{"files", list}}.dump())), what));
    const auto answer = KH_HUB_TRY(detail::json_body(response, what));
    if (!answer.contains("files") || !answer["files"].is_array()) {
      return hub_fail(ErrorKind::invalid_response, fmt::format("{}: no `files` list", what));
    }
    for (const auto& item : answer["files"]) {
      PreuploadAnswer entry;
      entry.path = detail::string_field(item, "path");
      const auto mode = detail::string_field(item, "uploadMode");
      if (mode != "regular" && mode != "lfs") {
        return hub_fail(ErrorKind::invalid_response,
                        fmt::format("{}: unknown upload mode \"{}\"", what, mode));
      }
      entry.lfs = mode == "lfs";
      entry.should_ignore = item.value("shouldIgnore", false);
      if (const auto oid = detail::string_field(item, "oid"); !oid.empty()) {
        entry.oid = oid;
      }
      answers.push_back(std::move(entry));
    }
  }
  return answers;
}

HubResult<CommitResult> HubClient::commit(const RepoRef& repo, std::string_view revision,
                                          const std::vector<CommitOperation>& operations,
                                          std::string_view summary, std::string_view description,
                                          std::optional<std::string_view> parent_commit,
                                          CreatePr create_pr) const {
  const auto what = fmt::format("commit to {} at \"{}\"", repo.id.str(), revision);
  json header = {{"summary", std::string(summary)}, {"description", std::string(description)}};
  if (parent_commit) {
    header["parentCommit"] = std::string(*parent_commit);
  }
  std::string body = json{{"key", "header"}, {"value", header}}.dump() + "\n";
  for (const auto& operation : operations) {
    auto path = KH_HUB_TRY(checked_path(operation.path_in_repo));
    switch (operation.kind) {
      case CommitOperation::Kind::add_file: {
        std::string content = operation.content;
        if (operation.source) {
          auto bytes = util::read_file(*operation.source);
          if (!bytes) {
            return hub_fail(ErrorKind::io, bytes.error().message);
          }
          content = std::move(*bytes);
        }
        body += json{{"key", "file"},
                     {"value", {{"content", base64_encode(content)}, {"path", path}, {"encoding", "base64"}}}}
                    .dump();
        break;
      }
      case CommitOperation::Kind::add_lfs_file:
        // _commit_api.py's _prepare_commit_payload, field for field and in its order.
        body += nlohmann::ordered_json{{"key", "lfsFile"},
                                       {"value",
                                        {{"path", path},
                                         {"algo", "sha256"},
                                         {"oid", operation.lfs_sha256},
                                         {"size", operation.lfs_size}}}}
                    .dump();
        break;
      case CommitOperation::Kind::delete_file:
        body += json{{"key", "deletedFile"}, {"value", {{"path", path}}}}.dump();
        break;
      case CommitOperation::Kind::delete_folder:
        body += json{{"key", "deletedFolder"}, {"value", {{"path", path + "/"}}}}.dump();
        break;
    }
    body += "\n";
  }
  HttpRequest request;
  request.method = "POST";
  request.url = fmt::format("{}/commit/{}{}", api_repo_url(m_endpoint.url, repo),
                            url_quote(revision, ""), query(create_pr));
  request.headers = base_headers(true);
  request.headers.emplace_back("Content-Type", "application/x-ndjson");
  request.body = std::move(body);
  // With a parent commit a repeated POST cannot apply twice (the server answers 412), so
  // retrying a 5xx is safe there; without one it could duplicate a commit.
  auto response = KH_HUB_TRY(detail::require_success(
      KH_HUB_TRY(send(std::move(request), parent_commit.has_value())), what));
  const auto answer = KH_HUB_TRY(detail::json_body(response, what));
  CommitResult result;
  result.commit_oid = detail::string_field(answer, "commitOid");
  result.commit_url = detail::string_field(answer, "commitUrl");
  if (const auto pr = detail::string_field(answer, "pullRequestUrl"); !pr.empty()) {
    result.pull_request_url = pr;
  }
  if (result.commit_oid.empty()) {
    return hub_fail(ErrorKind::invalid_response, fmt::format("{}: no `commitOid` in the answer", what));
  }
  return result;
}

}  // namespace kernelhub::hub
