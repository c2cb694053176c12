// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cli/diagnostic_json.hpp>

namespace kernelhub::cli {

nlohmann::ordered_json diagnostic_to_json(const util::Diagnostic& d) {
  nlohmann::ordered_json out = {{"severity", util::to_string(d.severity)},
                                {"file", d.location.file},
                                {"line", d.location.line},
                                {"column", d.location.column},
                                {"message", d.message}};
  if (!d.hint.empty()) {
    out["hint"] = d.hint;
  }
  return out;
}

nlohmann::ordered_json diagnostics_to_json(const std::vector<util::Diagnostic>& diagnostics) {
  auto list = nlohmann::ordered_json::array();
  for (const auto& diagnostic : diagnostics) {
    list.push_back(diagnostic_to_json(diagnostic));
  }
  return list;
}

}  // namespace kernelhub::cli
