// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/abi/violation.hpp>

#include <algorithm>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kernelhub::abi {

std::string_view rule_name(Rule rule) {
  switch (rule) {
    case Rule::object_file:
      return "object-file";
    case Rule::manylinux:
      return "manylinux";
    case Rule::dependency:
      return "dependency";
    case Rule::python_abi:
      return "python-abi";
    case Rule::torch_stable_abi:
      return "torch-stable-abi";
    case Rule::macos:
      return "macos";
  }
  return "object-file";
}

std::vector<Violation> ViolationCollector::sorted() const {
  auto result = m_violations;
  auto key = [](const Violation& v) {
    return std::tie(v.library, v.rule, v.symbol, v.version, v.message);
  };
  std::sort(result.begin(), result.end(),
            [&](const Violation& a, const Violation& b) { return key(a) < key(b); });
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

util::Diagnostic to_diagnostic(const Violation& violation) {
  util::Diagnostic diagnostic;
  diagnostic.location.file = violation.library;
  diagnostic.message = fmt::format("[{}] {}", rule_name(violation.rule), violation.message);
  diagnostic.hint = violation.hint;
  return diagnostic;
}

std::string violations_to_json(const std::vector<std::string>& libraries,
                               const std::vector<Violation>& violations) {
  auto list = nlohmann::json::array();
  for (const auto& v : violations) {
    list.push_back({{"library", v.library},
                    {"rule", rule_name(v.rule)},
                    {"symbol", v.symbol},
                    {"demangled", v.demangled},
                    {"version", v.version},
                    {"message", v.message},
                    {"hint", v.hint}});
  }
  nlohmann::json document = {
      {"libraries", libraries}, {"violations", list}, {"ok", violations.empty()}};
  return document.dump(2) + "\n";
}

}  // namespace kernelhub::abi
