// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <kernelhub/util/expected.hpp>

// A guard to run on TOML text before toml++ parses it. toml++ limits the nesting of arrays and
// inline tables, but not the parts of a dotted key (`k.k.k...= 1`) nor of a table header: it
// builds one nested table per part, recursively, and a key of 50,000 parts overflows the
// stack (SIGSEGV) in the parser and again in the tree's destructor. This scan is a single
// linear pass over the text, without recursion, that measures how deep each key would put its
// value (table header + dotted parts + enclosing inline tables and arrays) and stops at the
// first one deeper than the limit. It never reports anything on text within the limit: syntax
// errors are left to toml++, which explains them better.
namespace kernelhub::util {

// Far beyond any real build.toml, pyproject.toml or config.toml (they nest 3 to 5 levels),
// and far below the depth at which toml++'s recursion overflows a thread's stack.
inline constexpr std::size_t k_max_toml_depth = 100;

struct TomlDepthProblem {
  std::size_t line = 0;    // 1-based
  std::size_t column = 0;  // 1-based, in characters (UTF-8 code points)
  std::size_t depth = 0;   // the depth reached where the scan stopped
  std::string message;     // "key nested more than 100 levels deep (dotted parts, tables ...)"
};

// The first key, header or value nested deeper than `max_depth`, or nullopt.
std::optional<TomlDepthProblem> find_over_deep_toml(std::string_view text,
                                                    std::size_t max_depth = k_max_toml_depth);

// The same as an error "<file_name>:<line>:<column>: <message>", for the readers that report
// plain located errors.
Expected<void> check_toml_depth(std::string_view text, std::string_view file_name,
                                std::size_t max_depth = k_max_toml_depth);

}  // namespace kernelhub::util
