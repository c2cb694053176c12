// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/types/git_url.hpp>

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

namespace kernelhub::types {

namespace {

constexpr std::array<std::string_view, 7> k_schemes = {"https",   "http",      "git",     "ssh",
                                                       "git+ssh", "git+https", "git+http"};

bool is_scheme_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
}

bool has_space(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
}

// Host part of "scheme://[user@]host[:port]/path": must be non-empty.
bool has_host(std::string_view rest) {
  const auto authority = rest.substr(0, rest.find_first_of("/?#"));
  const auto at = authority.rfind('@');
  const auto host_port = at == std::string_view::npos ? authority : authority.substr(at + 1);
  const auto host = host_port.substr(0, host_port.rfind(':'));
  return !host.empty();
}

}  // namespace

util::Expected<GitUrl> GitUrl::parse(std::string_view text) {
  GitUrl url;
  url.m_original = std::string(text);
  const auto invalid = [&] { return util::fail(fmt::format("invalid git URL \"{}\"", text)); };
  if (text.empty() || has_space(text)) {
    return invalid();
  }
  const auto separator = text.find("://");
  if (separator != std::string_view::npos) {
    const auto scheme = text.substr(0, separator);
    if (scheme.empty() || !std::all_of(scheme.begin(), scheme.end(), is_scheme_char)) {
      return invalid();
    }
    std::string lowered(scheme);
    std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (std::find(k_schemes.begin(), k_schemes.end(), lowered) == k_schemes.end()) {
      return util::fail(fmt::format(
          "unsupported scheme \"{}\" in git URL \"{}\", expected one of: {}", scheme, text,
          fmt::join(k_schemes, ", ")));
    }
    if (!has_host(text.substr(separator + 3))) {
      return invalid();
    }
    url.m_scheme = lowered;
    url.m_normalized = std::string(text);
    return url;
  }
  // scp-like: user@host:path, with no slash before the colon.
  const auto at = text.find('@');
  const auto colon = text.find(':');
  if (at == std::string_view::npos || colon == std::string_view::npos || at == 0 ||
      colon <= at + 1 || colon + 1 >= text.size() ||
      text.substr(0, colon).find('/') != std::string_view::npos) {
    return invalid();
  }
  auto path = text.substr(colon + 1);
  url.m_scheme = "ssh";
  url.m_normalized = fmt::format("ssh://{}/{}", text.substr(0, colon),
                                 path.front() == '/' ? path.substr(1) : path);
  return url;
}

}  // namespace kernelhub::types
