// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/codegen/template_filters.hpp>

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

namespace kernelhub::codegen::detail {

namespace {

using nlohmann::json;

util::Expected<std::string> as_string(const Value& value, std::string_view filter) {
  if (!value.defined) {
    return util::fail(fmt::format("filter \"{}\" applied to an undefined value", filter));
  }
  if (!value.data.is_string()) {
    return util::fail(fmt::format("filter \"{}\" expects a string, got {}", filter,
                                  value.data.type_name()));
  }
  return value.data.get<std::string>();
}

util::Expected<Value> map_chars(const Value& input, std::string_view filter, int (*map)(int)) {
  auto text = KH_TRY(as_string(input, filter));
  std::transform(text.begin(), text.end(), text.begin(), [map](unsigned char c) {
    return static_cast<char>(map(c));
  });
  return Value{json(text)};
}

util::Expected<Value> lower(const Value& input, const std::vector<Value>&) {
  return map_chars(input, "lower", &::tolower);
}

util::Expected<Value> upper(const Value& input, const std::vector<Value>&) {
  return map_chars(input, "upper", &::toupper);
}

util::Expected<Value> trim(const Value& input, const std::vector<Value>&) {
  const auto text = KH_TRY(as_string(input, "trim"));
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    return Value{json("")};
  }
  const auto last = text.find_last_not_of(" \t\r\n");
  return Value{json(text.substr(first, last - first + 1))};
}

util::Expected<Value> join(const Value& input, const std::vector<Value>& arguments) {
  if (!input.defined || !input.data.is_array()) {
    return util::fail(fmt::format("filter \"join\" expects a list, got {}",
                                  input.defined ? input.data.type_name() : "undefined"));
  }
  std::string separator;
  if (!arguments.empty()) {
    separator = KH_TRY(as_string(arguments[0], "join"));
  }
  std::string result;
  for (std::size_t i = 0; i < input.data.size(); ++i) {
    if (i > 0) {
      result += separator;
    }
    result += to_text(input.data[i]);
  }
  return Value{json(result)};
}

util::Expected<Value> length(const Value& input, const std::vector<Value>&) {
  if (input.defined && (input.data.is_array() || input.data.is_object())) {
    return Value{json(input.data.size())};
  }
  if (input.defined && input.data.is_string()) {
    return Value{json(input.data.get_ref<const std::string&>().size())};
  }
  return util::fail(fmt::format("filter \"length\" expects a string, list or mapping, got {}",
                                input.defined ? input.data.type_name() : "undefined"));
}

util::Expected<Value> pick(const Value& input, std::string_view filter, bool first) {
  if (!input.defined || !input.data.is_array()) {
    return util::fail(fmt::format("filter \"{}\" expects a list, got {}", filter,
                                  input.defined ? input.data.type_name() : "undefined"));
  }
  if (input.data.empty()) {
    return Value{json(), false};
  }
  return Value{first ? input.data.front() : input.data.back()};
}

util::Expected<Value> first(const Value& input, const std::vector<Value>&) {
  return pick(input, "first", true);
}

util::Expected<Value> last(const Value& input, const std::vector<Value>&) {
  return pick(input, "last", false);
}

// default(fallback, boolean=false): the fallback replaces undefined values, and with the
// second argument true also every falsy value, as in Jinja.
util::Expected<Value> fallback(const Value& input, const std::vector<Value>& arguments) {
  const bool replace_falsy = arguments.size() > 1 && is_truthy(arguments[1]);
  const bool replace = !input.defined || (replace_falsy && !is_truthy(input));
  if (!replace) {
    return input;
  }
  return arguments.empty() ? Value{json("")} : arguments[0];
}

util::Expected<Value> replace(const Value& input, const std::vector<Value>& arguments) {
  auto text = KH_TRY(as_string(input, "replace"));
  const auto from = KH_TRY(as_string(arguments[0], "replace"));
  const auto to = KH_TRY(as_string(arguments[1], "replace"));
  if (from.empty()) {
    return Value{json(text)};
  }
  std::string result;
  std::size_t pos = 0;
  for (std::size_t hit = text.find(from); hit != std::string::npos; hit = text.find(from, pos)) {
    result.append(text, pos, hit - pos);
    result += to;
    pos = hit + from.size();
  }
  result.append(text, pos);
  return Value{json(result)};
}

// A JSON literal of the value. JSON strings are also valid TOML basic strings and Python
// string literals, which makes this the safe way to embed free text (a license) in them.
util::Expected<Value> tojson(const Value& input, const std::vector<Value>&) {
  if (!input.defined) {
    return util::fail("filter \"tojson\" applied to an undefined value");
  }
  return Value{json(input.data.dump())};
}

const std::array k_filters = {
    Filter{"default", 0, 2, &fallback}, Filter{"first", 0, 0, &first},
    Filter{"join", 0, 1, &join},        Filter{"last", 0, 0, &last},
    Filter{"length", 0, 0, &length},    Filter{"lower", 0, 0, &lower},
    Filter{"replace", 2, 2, &replace},  Filter{"tojson", 0, 0, &tojson},
    Filter{"trim", 0, 0, &trim},        Filter{"upper", 0, 0, &upper},
};

constexpr std::array<std::string_view, 10> k_filter_names = {
    "default", "first", "join", "last", "length", "lower", "replace", "tojson", "trim", "upper"};

constexpr std::array<std::string_view, 3> k_test_names = {"defined", "undefined", "none"};

}  // namespace

const Filter* find_filter(std::string_view name) {
  const auto it = std::find_if(k_filters.begin(), k_filters.end(),
                               [name](const Filter& filter) { return filter.name == name; });
  return it == k_filters.end() ? nullptr : &*it;
}

std::span<const std::string_view> filter_names() { return k_filter_names; }

bool is_known_test(std::string_view name) {
  return std::find(k_test_names.begin(), k_test_names.end(), name) != k_test_names.end();
}

bool apply_test(std::string_view name, const Value& value) {
  if (name == "defined") {
    return value.defined;
  }
  if (name == "undefined") {
    return !value.defined;
  }
  if (name == "none") {
    return value.defined && value.data.is_null();
  }
  return false;
}

std::span<const std::string_view> test_names() { return k_test_names; }

}  // namespace kernelhub::codegen::detail
