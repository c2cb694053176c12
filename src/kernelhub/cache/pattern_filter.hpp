// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kernelhub::cache {

// huggingface_hub's `filter_repo_objects`: `fnmatch.fnmatchcase` globs, case-sensitive,
// where `*` also crosses "/", a pattern ending in "/" gets "*" appended, and backslashes
// count as "/" in patterns and paths. Without allow patterns everything is allowed; an empty
// allow list allows nothing (as Python's `allow_patterns=[]`).
class PatternFilter {
 public:
  PatternFilter() = default;
  PatternFilter(std::optional<std::vector<std::string>> allow, std::vector<std::string> ignore);

  bool matches(std::string_view path) const;

 private:
  std::optional<std::vector<std::string>> m_allow;
  std::vector<std::string> m_ignore;
};

// One fnmatchcase glob against one path (after the backslash normalisation above).
bool glob_match(std::string_view pattern, std::string_view path);

}  // namespace kernelhub::cache
