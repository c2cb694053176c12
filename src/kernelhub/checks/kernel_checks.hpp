// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <kernelhub/config/build_config.hpp>
#include <kernelhub/util/diagnostic.hpp>

// The source checks of a kernel folder, as `build` runs them before building and the check
// subcommands run them alone. Each reports into the sink; none stops at the first problem.
namespace kernelhub::checks {

enum class SourceCheck { op_registrations, layout, python_imports };

// The Python files of the kernel's package (<ext>/<python name>/**.py, no __pycache__),
// sorted, as paths relative to `kernel_dir` with '/' separators.
std::vector<std::string> kernel_python_files(const std::filesystem::path& kernel_dir,
                                             const config::BuildConfig& config);

// The C-family sources build.toml lists ([torch] / [tvm-ffi] and every [kernel.*] src) that
// exist, sorted and without duplicates, relative to `kernel_dir` with '/' separators.
std::vector<std::string> kernel_native_files(const std::filesystem::path& kernel_dir,
                                             const config::BuildConfig& config);

// Runs `check` on the kernel in `kernel_dir`. Diagnostics name files as `kernel_dir` joined with
// their relative path (just the relative path when `kernel_dir` is "."), so they can be opened
// from where the command ran. An unreadable file is reported as an error.
void run_source_check(SourceCheck check, const std::filesystem::path& kernel_dir,
                      const config::LoadedBuildConfig& loaded, util::DiagnosticSink& sink);

}  // namespace kernelhub::checks
