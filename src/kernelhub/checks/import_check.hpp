// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <kernelhub/checks/script_runner.hpp>
#include <kernelhub/util/expected.hpp>

// The import check (builder.md §6.3): loads a built variant with the REFERENCE loader,
// `kernels.get_local_kernel(path, backend=...)`, in a fresh Python process, the way a user
// would. It runs with a temporary HOME (no user config or Hub cache), in a temporary working
// folder, without PYTHONPATH (so the kernel's sources are not importable by accident), and
// offline (HF_HUB_OFFLINE=1): a variant must load from its own files.
namespace kernelhub::checks {

struct ImportCheckOptions {
  std::string python = "python3";      // an interpreter with torch and `kernels` installed
  std::optional<std::string> backend;  // default: the variant's metadata.json backend
};

struct ImportCheckResult {
  bool loaded = false;
  // The interpreter has no `kernels` package: the check could not run (not a kernel defect).
  bool loader_missing = false;
  // The loader refused the backend ("Invalid backend 'rocm', system supported backends: ..."):
  // this machine's torch cannot load such variants, which says nothing about the variant.
  bool backend_unsupported = false;
  std::string backend;  // the backend it was loaded for
  std::string error;    // when not loaded: the last line of the traceback
  std::string output;   // everything the process printed
};

// Fails only when the variant has no readable metadata.json or Python cannot be started.
util::Expected<ImportCheckResult> check_variant_import(const std::filesystem::path& variant,
                                                       const ImportCheckOptions& options,
                                                       ScriptRunner& runner);

// The last non-empty line of `output` (a traceback's "Error: message" line).
std::string last_line(std::string_view output);

}  // namespace kernelhub::checks
