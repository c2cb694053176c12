// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include <kernelhub/builder/build_kernel.hpp>
#include <kernelhub/checks/import_check.hpp>

// The checks `build` runs around every build (issue 3), kept out of build_command.cpp.
namespace kernelhub::cli::commands {

// Before building: check-ops, check-layout and check-imports on the kernel in `dir`. Renders
// every problem (file:line:col) on stderr and throws util::FatalError when there is an error,
// so nothing is built from sources that would make a broken variant. A build.toml that does
// not read is left to the build, which reports it.
void run_source_checks_before_build(const std::string& dir);

// The load check's options for `python`: a variant's kernel-depends are looked for in this
// process's LOCAL_KERNELS and in the Hub cache kernels would use (KERNELS_CACHE, HF_HUB_CACHE,
// HF_HOME, ~/.cache/huggingface/hub), read offline.
checks::ImportCheckOptions load_check_options(const std::string& python);

// After building: check-load on every built variant with `python`. Renders each failure on
// stderr; returns false when a variant does not load. Variants of a backend this machine's
// torch cannot load, and a Python without the `kernels` package, are warnings. A variant that
// passed before with the same files, interpreter, torch and kernels package is not loaded
// again (its stamp is in build/.kernelhub/<variant>/). A variant whose kernel-depends are found
// nowhere is not loaded, with a note naming the dependency and how to provide it.
bool run_load_checks_after_build(const builder::BuildResult& result, const std::string& python);

}  // namespace kernelhub::cli::commands
