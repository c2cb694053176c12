// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

// kernelhub-testtool's variant subcommands, for tests/e2e/test_variants_parity.py. Both read
// a JSON array of cases on stdin (or take names as arguments) and return one result per case.
namespace kernelhub::testtool {

// Input: variant names. Output per name: {"ok", "name" (canonical), "framework", "arch"} or
// {"ok": false, "error"}.
nlohmann::json variants_parse(const std::vector<std::string>& args);

// Input per case: {"system": {cpu, os, macos, torch, cxx11, tvm_ffi, backend,
// backend_version, free_threaded, requested_backend}, "variants": [names]}.
// Output per case: {"ok", "trace": [{"variant", "accepted", "reason"}], "text", "warning",
// "skipped": [names that do not parse]} or {"ok": false, "error"} when the requested backend
// is refused.
nlohmann::json variants_resolve(const std::vector<std::string>& args);

}  // namespace kernelhub::testtool
