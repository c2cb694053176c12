// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/hub_client.hpp>

#include <set>
#include <thread>

#include <fmt/format.h>

#include <kernelhub/hub/client_support.hpp>
#include <kernelhub/hub/error_mapping.hpp>
#include <kernelhub/hub/hub_url.hpp>
#include <kernelhub/hub/tree_page.hpp>

namespace kernelhub::hub {

namespace detail {

HubResult<HttpResponse> require_success(HttpResponse response, std::string_view what) {
  if (response.status >= 400) {
    return tl::unexpected(error_from_response(response, what));
  }
  return response;
}

HubResult<nlohmann::json> json_body(const HttpResponse& response, std::string_view what) {
  auto json = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return hub_fail(ErrorKind::invalid_response,
                    fmt::format("{}: the server's answer is not JSON", what), response.status);
  }
  return json;
}

std::string string_field(const nlohmann::json& value, std::string_view key) {
  if (!value.is_object()) {
    return {};
  }
  const auto it = value.find(key);
  return it != value.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace detail

namespace {

std::chrono::milliseconds retry_after(const HttpResponse& response) {
  const auto header = response.headers.get("Retry-After");
  if (!header || header->empty() || header->find_first_not_of("0123456789") != std::string::npos ||
      header->size() > 6) {
    return {};
  }
  return std::chrono::seconds(std::stol(*header));
}

std::vector<GitRef> parse_refs(const nlohmann::json& list) {
  std::vector<GitRef> refs;
  if (!list.is_array()) {
    return refs;
  }
  for (const auto& item : list) {
    refs.push_back(GitRef{detail::string_field(item, "name"), detail::string_field(item, "ref"),
                          detail::string_field(item, "targetCommit")});
  }
  return refs;
}

}  // namespace

std::string HubClient::unreachable_message(std::string_view url,
                                           const TransportError& error) const {
  const bool hub = url.starts_with(m_endpoint.url);
  return fmt::format("cannot reach {} ({}){}", hub ? "the Hub at " + m_endpoint.url : std::string(url),
                     error.message,
                     hub ? "; check HF_ENDPOINT and the network, or set HF_HUB_OFFLINE=1 to use "
                           "only what is cached"
                         : "");
}

HubClient::HubClient(Endpoint endpoint, ClientOptions options, std::shared_ptr<Transport> transport)
    : m_endpoint(std::move(endpoint)),
      m_options(std::move(options)),
      m_transport(transport ? std::move(transport) : make_curl_transport()) {
  m_endpoint.url = normalize_endpoint(m_endpoint.url);
  if (m_endpoint.user_agent.empty()) {
    m_endpoint.user_agent = default_user_agent();
  }
  if (!m_options.sleep) {
    m_options.sleep = [](std::chrono::milliseconds delay) { std::this_thread::sleep_for(delay); };
  }
  if (m_options.parallel_downloads == 0) {
    m_options.parallel_downloads = 1;
  }
}

std::vector<std::pair<std::string, std::string>> HubClient::base_headers(bool with_token) const {
  std::vector<std::pair<std::string, std::string>> headers{{"User-Agent", m_endpoint.user_agent}};
  if (with_token && m_endpoint.token) {
    headers.emplace_back("Authorization", "Bearer " + *m_endpoint.token);
  }
  return headers;
}

HubResult<HttpResponse> HubClient::send(HttpRequest request, bool retry) const {
  if (m_endpoint.offline) {
    return hub_fail(ErrorKind::offline,
                    fmt::format("offline mode is enabled (HF_HUB_OFFLINE): no request to {}",
                                request.url));
  }
  if (!is_http_url(request.url)) {
    return hub_fail(ErrorKind::invalid_response,
                    fmt::format("refusing to request \"{}\": only http and https URLs are followed",
                                request.url));
  }
  const int attempts = retry ? std::max(1, m_options.retry.max_attempts) : 1;
  for (int attempt = 1;; ++attempt) {
    auto response = m_transport->perform(request);
    if (!response) {
      if (response.error().unreachable) {
        return hub_fail(ErrorKind::network, unreachable_message(request.url, response.error()));
      }
      if (!response.error().transient || attempt >= attempts) {
        return hub_fail(ErrorKind::network, response.error().message);
      }
      m_options.sleep(m_options.retry.delay_after(attempt));
      continue;
    }
    if (RetryPolicy::retryable_status(response->status) && attempt < attempts) {
      m_options.sleep(m_options.retry.delay_after(attempt, retry_after(*response)));
      continue;
    }
    return std::move(*response);
  }
}

HubResult<HttpResponse> HubClient::send_json(std::string method, std::string url,
                                             std::string body) const {
  HttpRequest request;
  request.method = std::move(method);
  request.url = std::move(url);
  request.headers = base_headers(true);
  if (!body.empty()) {
    request.headers.emplace_back("Content-Type", "application/json");
  }
  request.body = std::move(body);
  return send(std::move(request), true);
}

HubResult<RepoInfo> HubClient::repo_info(const RepoRef& repo,
                                         std::optional<std::string_view> revision) const {
  std::string url = api_repo_url(m_endpoint.url, repo);
  if (revision) {
    url += "/revision/" + url_quote(*revision, "");
  }
  const auto what = fmt::format("repo info for {}", repo.id.str());
  auto response = KH_HUB_TRY(detail::require_success(KH_HUB_TRY(send_json("GET", url, {})), what));
  const auto json = KH_HUB_TRY(detail::json_body(response, what));
  RepoInfo info;
  info.id = detail::string_field(json, "id");
  info.sha = detail::string_field(json, "sha");
  if (info.id.empty()) {
    return hub_fail(ErrorKind::invalid_response, fmt::format("{}: no `id` in the answer", what));
  }
  info.is_private = json.value("private", false);
  if (const auto siblings = json.find("siblings"); siblings != json.end() && siblings->is_array()) {
    for (const auto& sibling : *siblings) {
      info.siblings.push_back(detail::string_field(sibling, "rfilename"));
    }
  }
  return info;
}

HubResult<Refs> HubClient::list_refs(const RepoRef& repo, bool include_prs) const {
  std::string url = api_repo_url(m_endpoint.url, repo) + "/refs";
  if (include_prs) {
    url += "?include_prs=1";
  }
  const auto what = fmt::format("refs of {}", repo.id.str());
  auto response = KH_HUB_TRY(detail::require_success(KH_HUB_TRY(send_json("GET", url, {})), what));
  const auto json = KH_HUB_TRY(detail::json_body(response, what));
  if (!json.is_object()) {
    return hub_fail(ErrorKind::invalid_response, fmt::format("{}: not a JSON object", what));
  }
  Refs refs;
  refs.branches = parse_refs(json.value("branches", nlohmann::json::array()));
  refs.tags = parse_refs(json.value("tags", nlohmann::json::array()));
  refs.pull_requests = parse_refs(json.value("pullRequests", nlohmann::json::array()));
  return refs;
}

HubResult<OrganizationOverview> HubClient::organization_overview(std::string_view organization) const {
  const std::string url = m_endpoint.url + "/api/organizations/" + url_quote(organization, "") + "/overview";
  const auto what = fmt::format("overview of organization \"{}\"", organization);
  auto response = KH_HUB_TRY(detail::require_success(KH_HUB_TRY(send_json("GET", url, {})), what));
  const auto json = KH_HUB_TRY(detail::json_body(response, what));
  if (!json.is_object()) {
    return hub_fail(ErrorKind::invalid_response, fmt::format("{}: not a JSON object", what));
  }
  OrganizationOverview overview;
  // Python's truthiness of the attribute: any non-empty, non-zero, non-false value counts.
  if (const auto it = json.find("trustedKernelPublisher"); it != json.end()) {
    const auto& value = *it;
    overview.trusted_kernel_publisher =
        value.is_boolean() ? value.get<bool>()
        : value.is_number() ? value.get<double>() != 0.0
        : value.is_string() ? !value.get_ref<const std::string&>().empty()
        : value.is_array() || value.is_object() ? !value.empty()
                                                : false;
  }
  return overview;
}

HubResult<std::vector<std::string>> HubClient::trusted_keys() const {
  const std::string url = m_endpoint.url + "/api/kernelhub/trusted-keys";
  constexpr std::string_view what = "the hub's trusted keys";
  auto response = KH_HUB_TRY(detail::require_success(KH_HUB_TRY(send_json("GET", url, {})), what));
  const auto json = KH_HUB_TRY(detail::json_body(response, what));
  const auto keys = json.is_object() ? json.find("keys") : json.end();
  if (keys == json.end() || !keys->is_array()) {
    return hub_fail(ErrorKind::invalid_response, fmt::format("{}: no \"keys\" list", what));
  }
  std::vector<std::string> pems;
  for (const auto& key : *keys) {
    const auto pem = key.is_object() ? key.find("pem") : key.end();
    if (pem == key.end() || !pem->is_string()) {
      return hub_fail(ErrorKind::invalid_response, fmt::format("{}: a key without \"pem\"", what));
    }
    pems.push_back(pem->get<std::string>());
  }
  return pems;
}

HubResult<std::vector<TreeEntry>> HubClient::list_tree(const RepoRef& repo,
                                                       std::string_view revision,
                                                       std::string_view path,
                                                       Recursive recursive) const {
  const auto what = fmt::format("file list of {} at \"{}\"", repo.id.str(), revision);
  const auto endpoint_origin = url_origin(m_endpoint.url);
  TreeEntries listing;
  std::optional<std::string> url = tree_url(m_endpoint.url, repo, revision, path, recursive);
  // A server whose Link pages loop, or never end, must not keep us here for ever nor grow the
  // listing without bound: a page URL seen before is an error, and so are more pages than
  // any real repository has (the Hub sends 1,000 entries a page); the entries' count, bytes
  // and path lengths are bounded while each page is parsed (tree_page.hpp).
  constexpr std::size_t k_max_pages = 10000;
  const TreeListingLimits limits;
  std::set<std::string> seen;
  while (url) {
    if (!seen.insert(*url).second) {
      return hub_fail(ErrorKind::invalid_response,
                      fmt::format("{}: the server's next page \"{}\" repeats an earlier page",
                                  what, *url));
    }
    if (seen.size() > k_max_pages) {
      return hub_fail(ErrorKind::invalid_response,
                      fmt::format("{}: the server sent more than {} pages", what, k_max_pages));
    }
    const std::string request_url = *url;
    HttpRequest request;
    request.url = request_url;
    request.headers = base_headers(url_origin(*url) == endpoint_origin);
    auto response = KH_HUB_TRY(detail::require_success(KH_HUB_TRY(send(std::move(request), true)), what));
    if (auto read = read_tree_page(response.body, what, limits, listing); !read) {
      return tl::unexpected(std::move(read).error());
    }
    url.reset();
    if (const auto link = response.headers.get("Link")) {
      // Relative links are taken against the page they came from.
      if (const auto next = link_next(*link)) {
        url = resolve_location(request_url, *next);
      }
    }
  }
  return std::move(listing.entries);
}

HubResult<FileMetadata> HubClient::file_metadata(const RepoRef& repo, std::string_view revision,
                                                 std::string_view path) const {
  const auto what = fmt::format("\"{}\" in {} at \"{}\"", path, repo.id.str(), revision);
  std::string url = resolve_url(m_endpoint.url, repo, revision, path);
  constexpr int k_max_relative_redirects = 10;
  for (int hop = 0; hop <= k_max_relative_redirects; ++hop) {
    HttpRequest request;
    request.method = "HEAD";
    request.url = url;
    request.headers = base_headers(true);
    request.headers.emplace_back("Accept-Encoding", "identity");
    auto response = KH_HUB_TRY(detail::require_success(KH_HUB_TRY(send(std::move(request), true)), what));
    const bool redirect = response.status >= 300 && response.status < 400;
    const auto location = response.headers.get("Location");
    if (redirect && location && !url_origin(*location)) {
      // A renamed repo: same host, new path; the query is dropped as the reference does.
      auto target = resolve_location(url, *location);
      url = target.substr(0, target.find('?'));
      continue;
    }
    FileMetadata metadata;
    metadata.commit = response.headers.get("X-Repo-Commit").value_or("");
    auto etag = response.headers.get("X-Linked-Etag");
    if (!etag) {
      etag = response.headers.get("ETag");
    }
    auto size = response.headers.get("X-Linked-Size");
    if (!size && !redirect) {
      size = response.headers.get("Content-Length");
    }
    if (metadata.commit.empty() || !etag || !size || size->empty() ||
        size->find_first_not_of("0123456789") != std::string::npos) {
      return hub_fail(ErrorKind::invalid_response,
                      fmt::format("{}: the server did not send X-Repo-Commit, ETag and a size",
                                  what),
                      response.status);
    }
    metadata.etag = normalize_etag(*etag);
    metadata.size = std::stoull(*size);
    metadata.location = redirect && location ? *location : url;
    if (!is_http_url(metadata.location)) {
      return hub_fail(ErrorKind::invalid_response,
                      fmt::format("{}: the server redirected to \"{}\"; only http and https "
                                  "are followed",
                                  what, metadata.location),
                      response.status);
    }
    return metadata;
  }
  return hub_fail(ErrorKind::invalid_response, fmt::format("{}: too many redirects", what));
}

}  // namespace kernelhub::hub
