// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include <kernelhub/codegen/template_expression.hpp>
#include <kernelhub/util/expected.hpp>

// Internals of the template engine: the filters (`x | lower`) and tests (`x is defined`).
// The set is small on purpose: what the init templates and the kernel card use, plus the
// everyday Jinja filters a card author reaches for.
namespace kernelhub::codegen::detail {

struct Filter {
  std::string_view name;
  std::size_t min_arguments;
  std::size_t max_arguments;
  // Errors are plain messages; the caller adds the location.
  util::Expected<Value> (*apply)(const Value& input, const std::vector<Value>& arguments);
};

// nullptr for unknown filters.
const Filter* find_filter(std::string_view name);
std::span<const std::string_view> filter_names();

// Tests: defined, undefined, none. Returns false for unknown names; check is_known_test first.
bool is_known_test(std::string_view name);
bool apply_test(std::string_view name, const Value& value);
std::span<const std::string_view> test_names();

}  // namespace kernelhub::codegen::detail
