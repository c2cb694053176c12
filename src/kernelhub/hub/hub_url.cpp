// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/hub_url.hpp>

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace kernelhub::hub {

namespace {

bool always_safe(unsigned char c) {
  return std::isalnum(c) != 0 || c == '_' || c == '.' || c == '-' || c == '~';
}

std::string lower(std::string_view text) {
  std::string result(text);
  std::transform(result.begin(), result.end(), result.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return result;
}

// Length of the `scheme:` of an absolute URL ("https:" → 6), or 0.
std::size_t scheme_length(std::string_view url) {
  const auto colon = url.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    return 0;
  }
  for (std::size_t i = 0; i < colon; ++i) {
    const auto c = static_cast<unsigned char>(url[i]);
    if (std::isalnum(c) == 0 && c != '+' && c != '-' && c != '.') {
      return 0;
    }
  }
  return url.substr(colon + 1).starts_with("//") ? colon + 1 : 0;
}

}  // namespace

std::string url_quote(std::string_view text, std::string_view safe) {
  std::string result;
  result.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (always_safe(c) || safe.find(ch) != std::string_view::npos) {
      result.push_back(ch);
    } else {
      result += fmt::format("%{:02X}", c);
    }
  }
  return result;
}

std::string api_repo_url(std::string_view endpoint, const RepoRef& repo) {
  return fmt::format("{}/api/{}/{}", endpoint, repo_type_api_part(repo.type), repo.id.str());
}

std::string resolve_url(std::string_view endpoint, const RepoRef& repo, std::string_view revision,
                        std::string_view path) {
  return fmt::format("{}/{}{}/resolve/{}/{}", endpoint, repo_type_url_prefix(repo.type),
                     repo.id.str(), url_quote(revision, ""), url_quote(path));
}

std::string tree_url(std::string_view endpoint, const RepoRef& repo, std::string_view revision,
                     std::string_view path, Recursive recursive) {
  std::string url = fmt::format("{}/tree/{}", api_repo_url(endpoint, repo), url_quote(revision, ""));
  if (!path.empty()) {
    url += "/" + url_quote(path, "");
  }
  url += recursive == Recursive::yes ? "?recursive=true&expand=false"
                                     : "?recursive=false&expand=false";
  return url;
}

std::optional<std::string> link_next(std::string_view header) {
  std::size_t pos = 0;
  while (true) {
    const auto open = header.find('<', pos);
    if (open == std::string_view::npos) {
      return std::nullopt;
    }
    const auto close = header.find('>', open);
    if (close == std::string_view::npos) {
      return std::nullopt;
    }
    const auto target = header.substr(open + 1, close - open - 1);
    // The parameters run to the next link (a ',' after the '>').
    auto params_end = header.find(',', close);
    const auto params = lower(header.substr(close + 1, params_end == std::string_view::npos
                                                          ? std::string_view::npos
                                                          : params_end - close - 1));
    if (params.find("rel=\"next\"") != std::string::npos ||
        params.find("rel=next") != std::string::npos) {
      return std::string(target);
    }
    if (params_end == std::string_view::npos) {
      return std::nullopt;
    }
    pos = params_end + 1;
  }
}

std::optional<std::string> url_origin(std::string_view url) {
  const auto scheme_len = scheme_length(url);
  if (scheme_len == 0) {
    return std::nullopt;
  }
  const std::string scheme = lower(url.substr(0, scheme_len - 1));
  auto authority = url.substr(scheme_len + 2);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    authority = authority.substr(at + 1);
  }
  std::string host(authority);
  std::string port;
  const auto bracket = authority.rfind(']');
  const auto colon = authority.rfind(':');
  if (colon != std::string_view::npos && (bracket == std::string_view::npos || colon > bracket)) {
    host = std::string(authority.substr(0, colon));
    port = std::string(authority.substr(colon + 1));
  }
  if (port.empty()) {
    port = scheme == "https" ? "443" : scheme == "http" ? "80" : "";
  }
  return fmt::format("{}://{}:{}", scheme, lower(host), port);
}

bool is_http_url(std::string_view url) {
  const auto scheme_len = scheme_length(url);
  if (scheme_len == 0) {
    return false;
  }
  const auto scheme = lower(url.substr(0, scheme_len - 1));
  return scheme == "http" || scheme == "https";
}

std::string resolve_location(std::string_view base_url, std::string_view location) {
  if (scheme_length(location) != 0) {
    return std::string(location);
  }
  const auto scheme_len = scheme_length(base_url);
  if (location.starts_with("//")) {
    return fmt::format("{}{}", base_url.substr(0, scheme_len), location);
  }
  const auto authority_end = base_url.find_first_of("/?#", scheme_len + 2);
  const auto origin = base_url.substr(0, authority_end);
  if (location.starts_with("/")) {
    return fmt::format("{}{}", origin, location);
  }
  auto path = authority_end == std::string_view::npos ? std::string_view("/")
                                                      : base_url.substr(authority_end);
  path = path.substr(0, path.find_first_of("?#"));
  path = path.substr(0, path.rfind('/') + 1);
  return fmt::format("{}{}{}", origin, path.empty() ? "/" : path, location);
}

std::string normalize_etag(std::string_view etag) {
  if (etag.starts_with("W/")) {
    etag.remove_prefix(2);
  }
  while (!etag.empty() && etag.front() == '"') {
    etag.remove_prefix(1);
  }
  while (!etag.empty() && etag.back() == '"') {
    etag.remove_suffix(1);
  }
  return std::string(etag);
}

}  // namespace kernelhub::hub
