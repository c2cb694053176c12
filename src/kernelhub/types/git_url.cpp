// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/types/git_url.hpp>

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include <kernelhub/types/url.hpp>

namespace kernelhub::types {

namespace {

constexpr std::array<std::string_view, 7> k_schemes = {"https",   "http",      "git",     "ssh",
                                                       "git+ssh", "git+https", "git+http"};

}  // namespace

util::Expected<GitUrl> GitUrl::parse(std::string_view text) {
  GitUrl git_url;
  git_url.m_original = std::string(text);
  if (auto url = parse_url(text)) {
    if (std::find(k_schemes.begin(), k_schemes.end(), url->scheme) == k_schemes.end()) {
      return util::fail(fmt::format(
          "unsupported scheme \"{}\" in git URL \"{}\", expected one of: {}", url->scheme, text,
          fmt::join(k_schemes, ", ")));
    }
    git_url.m_scheme = url->scheme;
    git_url.m_normalized = url->serialize();
    return git_url;
  }
  // scp-like: everything before the first ':' is the host (with an optional user).
  const auto colon = text.find(':');
  if (colon != std::string_view::npos && colon > 0 && colon + 1 < text.size() &&
      text[colon + 1] != '/') {
    if (auto url = parse_url(fmt::format("ssh://{}/{}", text.substr(0, colon),
                                         text.substr(colon + 1)))) {
      git_url.m_scheme = "ssh";
      git_url.m_normalized = url->serialize();
      return git_url;
    }
  }
  return util::fail(fmt::format("invalid git URL \"{}\"", text));
}

}  // namespace kernelhub::types
