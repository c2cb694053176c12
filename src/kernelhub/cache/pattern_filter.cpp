// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cache/pattern_filter.hpp>

#include <algorithm>
#include <fnmatch.h>

namespace kernelhub::cache {

namespace {

std::string normalise(std::string_view text) {
  std::string out(text);
  std::replace(out.begin(), out.end(), '\\', '/');
  return out;
}

std::vector<std::string> prepare(std::vector<std::string> patterns) {
  for (auto& pattern : patterns) {
    pattern = normalise(pattern);
    if (!pattern.empty() && pattern.back() == '/') {
      pattern += '*';
    }
  }
  return patterns;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view path) {
  // POSIX fnmatch without FNM_PATHNAME or FNM_PERIOD lets "*" cross "/" and match leading
  // dots, as Python's fnmatch does; FNM_NOESCAPE because Python has no escape character.
  const auto p = normalise(pattern);
  const auto s = normalise(path);
  return ::fnmatch(p.c_str(), s.c_str(), FNM_NOESCAPE) == 0;
}

PatternFilter::PatternFilter(std::optional<std::vector<std::string>> allow,
                             std::vector<std::string> ignore)
    : m_ignore(prepare(std::move(ignore))) {
  if (allow) {
    m_allow = prepare(std::move(*allow));
  }
}

bool PatternFilter::matches(std::string_view path) const {
  const auto matches_any = [&](const std::vector<std::string>& patterns) {
    return std::any_of(patterns.begin(), patterns.end(),
                       [&](const std::string& pattern) { return glob_match(pattern, path); });
  };
  if (m_allow && !matches_any(*m_allow)) {
    return false;
  }
  return !matches_any(m_ignore);
}

}  // namespace kernelhub::cache
