// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include <kernelhub/util/diagnostic.hpp>

namespace kernelhub::cli {

// The `--json` form of diagnostics, shared by every command that reports them:
// {"severity", "file", "line", "column", "message", "hint"?}; "hint" only when there is one.
nlohmann::ordered_json diagnostic_to_json(const util::Diagnostic& diagnostic);
nlohmann::ordered_json diagnostics_to_json(const std::vector<util::Diagnostic>& diagnostics);

}  // namespace kernelhub::cli
