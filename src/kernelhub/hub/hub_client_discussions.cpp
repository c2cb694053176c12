// SPDX-License-Identifier: Apache-2.0
// The Hub's discussions API as huggingface_hub 2.4.0 calls it (hf_api.py):
//   GET  /api/{T}s/{repo}/discussions?p=<page>[&type=][&status=][&author=]
//        -> {"discussions": [...], "count": N, "start": S}; more pages while S + len < N
//        (get_repo_discussions)
//   GET  /api/{T}s/{repo}/discussions/{num}?diff=1 -> the discussion with "events",
//        "changes": {"base", "mergeCommitId"}, "filesWithConflicts", "diff"
//        (get_discussion_details)
//   POST /api/{T}s/{repo}/discussions/{num}/comment {"comment"} -> {"newMessage": event}
//   POST .../status {"status": "open"|"closed", "comment"?} -> {"newStatus": event}
//   POST .../merge {"comment"?} -> {"newStatus": event}
//        (_post_discussion_changes: comment_discussion, change_discussion_status,
//        merge_pull_request)
// huggingface_hub refuses repo_type="kernel" in these calls (it checks REPO_TYPES, which lacks
// it) although the URLs are the same for every type; nothing here depends on that list.
#include <kernelhub/hub/hub_client.hpp>

#include <fmt/format.h>

#include <kernelhub/hub/client_support.hpp>
#include <kernelhub/hub/hub_url.hpp>

namespace kernelhub::hub {

namespace {

using nlohmann::json;

// A page of 50 for years of discussions is far more than any repository has; a server that
// keeps answering pages is stopped here.
constexpr std::size_t k_max_pages = 10000;

std::string discussions_url(const std::string& endpoint, const RepoRef& repo) {
  return api_repo_url(endpoint, repo) + "/discussions";
}

// A count the answer gives, 0 when it is missing or not a number.
std::size_t number_at(const json& answer, const char* key) {
  const auto it = answer.find(key);
  return it != answer.end() && it->is_number_unsigned() ? it->get<std::size_t>() : 0;
}

}  // namespace

HubResult<std::vector<Discussion>> HubClient::list_discussions(const RepoRef& repo,
                                                               std::string_view type,
                                                               std::string_view status,
                                                               std::string_view author) const {
  std::string filters;
  if (!type.empty()) {
    filters += "&type=" + url_quote(type, "");
  }
  if (!status.empty()) {
    filters += "&status=" + url_quote(status, "");
  }
  if (!author.empty()) {
    filters += "&author=" + url_quote(author, "");
  }
  const auto what = fmt::format("discussions of {}", repo.id.str());
  std::vector<Discussion> out;
  for (std::size_t page = 0; page < k_max_pages; ++page) {
    const auto url = fmt::format("{}?p={}{}", discussions_url(m_endpoint.url, repo), page, filters);
    const auto response =
        KH_HUB_TRY(detail::require_success(KH_HUB_TRY(send_json("GET", url, {})), what));
    const auto answer = KH_HUB_TRY(detail::json_body(response, what));
    const auto listed = answer.is_object() ? answer.find("discussions") : answer.end();
    if (listed == answer.end() || !listed->is_array()) {
      return hub_fail(ErrorKind::invalid_response,
                      fmt::format("{}: no \"discussions\" list in the answer", what));
    }
    for (const auto& discussion : *listed) {
      out.push_back(parse_discussion(discussion));
    }
    const auto count = number_at(answer, "count");
    const auto start = number_at(answer, "start");
    if (listed->empty() || start + listed->size() >= count) {
      return out;
    }
  }
  return hub_fail(ErrorKind::invalid_response,
                  fmt::format("{}: the server answered more than {} pages", what, k_max_pages));
}

HubResult<Discussion> HubClient::discussion_details(const RepoRef& repo, long num) const {
  const auto url = fmt::format("{}/{}?diff=1", discussions_url(m_endpoint.url, repo), num);
  const auto what = fmt::format("discussion #{} of {}", num, repo.id.str());
  const auto response =
      KH_HUB_TRY(detail::require_success(KH_HUB_TRY(send_json("GET", url, {})), what));
  const auto answer = KH_HUB_TRY(detail::json_body(response, what));
  if (!answer.is_object() || !answer.contains("num")) {
    return hub_fail(ErrorKind::invalid_response, fmt::format("{}: not a discussion", what));
  }
  return parse_discussion(answer);
}

HubResult<DiscussionEvent> HubClient::post_discussion_change(const RepoRef& repo, long num,
                                                             std::string_view resource,
                                                             const std::string& body,
                                                             std::string_view answer_key) const {
  const auto url = fmt::format("{}/{}/{}", discussions_url(m_endpoint.url, repo), num, resource);
  const auto what = fmt::format("{} on discussion #{} of {}", resource, num, repo.id.str());
  // Not retried: a comment sent twice would show twice.
  HttpRequest request;
  request.method = "POST";
  request.url = url;
  request.headers = base_headers(true);
  request.headers.emplace_back("Content-Type", "application/json");
  request.body = body;
  const auto response = KH_HUB_TRY(detail::require_success(KH_HUB_TRY(send(std::move(request), false)), what));
  const auto answer = KH_HUB_TRY(detail::json_body(response, what));
  const auto event = answer.is_object() ? answer.find(answer_key) : answer.end();
  if (event == answer.end()) {
    return hub_fail(ErrorKind::invalid_response,
                    fmt::format("{}: no \"{}\" in the answer", what, answer_key));
  }
  return parse_discussion_event(*event);
}

HubResult<DiscussionEvent> HubClient::comment_discussion(const RepoRef& repo, long num,
                                                         std::string_view comment) const {
  const json body = {{"comment", std::string(comment)}};
  return post_discussion_change(repo, num, "comment", body.dump(), "newMessage");
}

HubResult<DiscussionEvent> HubClient::change_discussion_status(const RepoRef& repo, long num,
                                                               std::string_view status,
                                                               std::string_view comment) const {
  json body = {{"status", std::string(status)}};
  if (!comment.empty()) {
    body["comment"] = std::string(comment);
  }
  return post_discussion_change(repo, num, "status", body.dump(), "newStatus");
}

HubResult<DiscussionEvent> HubClient::merge_pull_request(const RepoRef& repo, long num,
                                                         std::string_view comment) const {
  // huggingface_hub sends no body without a comment; an empty object means the same.
  const json body = comment.empty() ? json::object() : json{{"comment", std::string(comment)}};
  return post_discussion_change(repo, num, "merge", body.dump(), "newStatus");
}

}  // namespace kernelhub::hub
