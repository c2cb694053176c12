// SPDX-License-Identifier: Apache-2.0
// Evaluation of template expressions (declared in template_expression.hpp).
#include <kernelhub/codegen/template_expression.hpp>

#include <cmath>

#include <fmt/format.h>

#include <kernelhub/codegen/template_filters.hpp>

namespace kernelhub::codegen::detail {

using nlohmann::json;

const json* Scope::find(std::string_view name) const {
  for (auto it = m_locals.rbegin(); it != m_locals.rend(); ++it) {
    if (it->first == name) {
      return &it->second;
    }
  }
  if (m_root.is_object()) {
    const auto it = m_root.find(name);
    if (it != m_root.end()) {
      return &*it;
    }
  }
  return nullptr;
}

bool is_truthy(const Value& value) {
  if (!value.defined) {
    return false;
  }
  const json& data = value.data;
  switch (data.type()) {
    case json::value_t::null: return false;
    case json::value_t::boolean: return data.get<bool>();
    case json::value_t::number_integer: return data.get<std::int64_t>() != 0;
    case json::value_t::number_unsigned: return data.get<std::uint64_t>() != 0;
    case json::value_t::number_float: return data.get<double>() != 0.0;
    case json::value_t::string: return !data.get_ref<const std::string&>().empty();
    case json::value_t::array:
    case json::value_t::object: return !data.empty();
    default: return true;
  }
}

namespace {

std::string float_text(double value) {
  if (std::isnan(value)) {
    return "nan";
  }
  if (std::isinf(value)) {
    return value > 0 ? "inf" : "-inf";
  }
  // Shortest round-trip digits, plus ".0" for whole numbers as Python and minijinja print them.
  auto text = fmt::format("{}", value);
  if (text.find_first_of(".e") == std::string::npos) {
    text += ".0";
  }
  return text;
}

// Items inside printed lists and maps are quoted, as minijinja prints them.
std::string nested_text(const json& value) {
  return value.is_string() ? value.dump() : to_text(value);
}

}  // namespace

std::string to_text(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "none";
    case json::value_t::boolean: return value.get<bool>() ? "true" : "false";
    case json::value_t::string: return value.get<std::string>();
    case json::value_t::number_float: return float_text(value.get<double>());
    case json::value_t::array: {
      std::string text = "[";
      for (std::size_t i = 0; i < value.size(); ++i) {
        text += (i > 0 ? ", " : "") + nested_text(value[i]);
      }
      return text + "]";
    }
    case json::value_t::object: {
      std::string text = "{";
      bool first = true;
      for (const auto& [key, item] : value.items()) {
        text += (first ? "" : ", ") + json(key).dump() + ": " + nested_text(item);
        first = false;
      }
      return text + "}";
    }
    default: return value.dump();
  }
}

namespace {

using Kind = Expression::Kind;

class Evaluator {
 public:
  Evaluator(const Scope& scope, const TemplateSource& source) : m_scope(scope), m_source(source) {}

  util::Expected<Value> eval(const Expression& e) {
    switch (e.kind) {
      case Kind::literal: return Value{e.value};
      case Kind::variable: {
        const json* found = m_scope.find(e.name);
        return found == nullptr ? Value{json(), false} : Value{*found};
      }
      case Kind::attribute: return attribute(e);
      case Kind::item: return item(e);
      case Kind::list: {
        json list = json::array();
        for (const auto& operand : e.operands) {
          list.push_back(KH_TRY(defined(*operand)));
        }
        return Value{std::move(list)};
      }
      case Kind::negation: return Value{json(!is_truthy(KH_TRY(eval(*e.operands[0]))))};
      case Kind::conjunction: {
        // Python's `and`/`or` return an operand, not a bool; Jinja keeps that.
        auto left = KH_TRY(eval(*e.operands[0]));
        return is_truthy(left) ? eval(*e.operands[1]) : left;
      }
      case Kind::disjunction: {
        auto left = KH_TRY(eval(*e.operands[0]));
        return is_truthy(left) ? left : eval(*e.operands[1]);
      }
      case Kind::equal:
      case Kind::not_equal: {
        const auto left = KH_TRY(eval(*e.operands[0]));
        const auto right = KH_TRY(eval(*e.operands[1]));
        const bool same = left.defined == right.defined && (!left.defined || left.data == right.data);
        return Value{json(e.kind == Kind::equal ? same : !same)};
      }
      case Kind::contains:
      case Kind::not_contains: {
        const bool found = KH_TRY(contains(e));
        return Value{json(e.kind == Kind::contains ? found : !found)};
      }
      case Kind::concat: {
        const auto left = KH_TRY(defined(*e.operands[0]));
        const auto right = KH_TRY(defined(*e.operands[1]));
        return Value{json(to_text(left) + to_text(right))};
      }
      case Kind::filter: return filter(e);
      case Kind::test: {
        const bool result = apply_test(e.name, KH_TRY(eval(*e.operands[0])));
        return Value{json(e.negated ? !result : result)};
      }
    }
    return m_source.fail_at(e.offset, "unsupported expression");
  }

  // Evaluates `e` and fails if the result is undefined, naming what was undefined.
  util::Expected<json> defined(const Expression& e) {
    auto value = KH_TRY(eval(e));
    if (!value.defined) {
      const auto name = describe(e);
      return m_source.fail_at(e.offset, name.empty() ? std::string("value is undefined")
                                                     : fmt::format("\"{}\" is undefined", name));
    }
    return std::move(value.data);
  }

 private:
  util::Expected<Value> attribute(const Expression& e) {
    const auto base = KH_TRY(eval(*e.operands[0]));
    if (base.defined && base.data.is_object()) {
      const auto it = base.data.find(e.name);
      if (it != base.data.end()) {
        return Value{*it};
      }
    }
    if (base.defined && base.data.is_array() && !e.name.empty() &&
        e.name.find_first_not_of("0123456789") == std::string::npos) {
      const auto index = std::stoull(e.name);
      if (index < base.data.size()) {
        return Value{base.data[index]};
      }
    }
    return Value{json(), false};
  }

  util::Expected<Value> item(const Expression& e) {
    const auto base = KH_TRY(eval(*e.operands[0]));
    const auto index = KH_TRY(eval(*e.operands[1]));
    if (!base.defined || !index.defined) {
      return Value{json(), false};
    }
    if (base.data.is_array() && index.data.is_number_integer()) {
      auto position = index.data.get<std::int64_t>();
      const auto size = static_cast<std::int64_t>(base.data.size());
      if (position < 0) {
        position += size;  // Python's negative indices
      }
      if (position >= 0 && position < size) {
        return Value{base.data[static_cast<std::size_t>(position)]};
      }
      return Value{json(), false};
    }
    if (base.data.is_object() && index.data.is_string()) {
      const auto it = base.data.find(index.data.get<std::string>());
      return it == base.data.end() ? Value{json(), false} : Value{*it};
    }
    return Value{json(), false};
  }

  util::Expected<bool> contains(const Expression& e) {
    const auto needle = KH_TRY(eval(*e.operands[0]));
    const auto haystack = KH_TRY(eval(*e.operands[1]));
    if (haystack.defined && haystack.data.is_array()) {
      for (const auto& element : haystack.data) {
        if (needle.defined && element == needle.data) {
          return true;
        }
      }
      return false;
    }
    if (haystack.defined && haystack.data.is_string() && needle.defined && needle.data.is_string()) {
      return haystack.data.get_ref<const std::string&>().find(
                 needle.data.get_ref<const std::string&>()) != std::string::npos;
    }
    if (haystack.defined && haystack.data.is_object() && needle.defined && needle.data.is_string()) {
      return haystack.data.contains(needle.data.get<std::string>());
    }
    return m_source.fail_at(e.offset, fmt::format("cannot test membership in {}",
                                                  haystack.defined ? haystack.data.type_name()
                                                                   : "an undefined value"));
  }

  util::Expected<Value> filter(const Expression& e) {
    const Filter* filter = find_filter(e.name);
    const auto input = KH_TRY(eval(*e.operands[0]));
    std::vector<Value> arguments;
    for (std::size_t i = 1; i < e.operands.size(); ++i) {
      arguments.push_back(KH_TRY(eval(*e.operands[i])));
    }
    auto result = filter->apply(input, arguments);
    if (!result) {
      return m_source.fail_at(e.offset, result.error().message);
    }
    return std::move(*result);
  }

  const Scope& m_scope;
  const TemplateSource& m_source;
};

}  // namespace

util::Expected<Value> evaluate(const Expression& expression, const Scope& scope,
                               const TemplateSource& source) {
  Evaluator evaluator(scope, source);
  return evaluator.eval(expression);
}

}  // namespace kernelhub::codegen::detail
