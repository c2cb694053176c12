// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <kernelhub/builder/build_kernel.hpp>
#include <kernelhub/checks/import_check.hpp>
#include <kernelhub/cli/commands/load_check_record.hpp>

// The checks `build` runs around every build (issue 3), kept out of build_command.cpp.
namespace kernelhub::cli::commands {

enum class Verbose { no, yes };

// Before building: check-ops, check-layout and check-imports on the kernel in `dir`. Renders
// every problem (file:line:col) on stderr and throws util::FatalError when there is an error,
// so nothing is built from sources that would make a broken variant. A build.toml that does
// not read is left to the build, which reports it. Notes (optional imports allowed) are shown
// only with Verbose::yes.
void run_source_checks_before_build(const std::string& dir, Verbose verbose);

// The load check's first interpreter, started before the build so that its import of torch
// and kernels (seconds) overlaps CMake and the compiler (issue 13 item 15); nullptr when it
// cannot be started (the check then starts its own).
std::unique_ptr<checks::ImportCheckWorker> start_load_check_worker(const std::string& python);

// The load check's options for `python`: a variant's kernel-depends are looked for in this
// process's LOCAL_KERNELS and in the Hub cache kernels would use (KERNELS_CACHE, HF_HUB_CACHE,
// HF_HOME, ~/.cache/huggingface/hub), read offline.
checks::ImportCheckOptions load_check_options(const std::string& python);

struct LoadCheckSummary {
  bool all_loaded = true;
  std::vector<SetAsideVariant> failed;  // the variants moved out of build/
};

// After building: check-load on every built variant with `python`. Renders each failure on
// stderr (the loader's whole output too with Verbose::yes), records each outcome beside the
// variant (load_check_record.hpp) and moves each variant that does not load out of build/,
// removing it from `result.variants`. Variants of a backend this machine's torch cannot load,
// and a Python without the `kernels` package, are warnings. A variant that passed before with
// the same files, interpreter, torch and kernels package is not loaded again. A variant whose
// kernel-depends are found nowhere is not loaded, with a note naming the dependency and how to
// provide it.
// `warm`, from start_load_check_worker(python) before the build, checks the first variant that
// needs a check; each later one gets an interpreter started while the one before it loads.
LoadCheckSummary run_load_checks_after_build(
    builder::BuildResult& result, const std::string& python, Verbose verbose,
    std::unique_ptr<checks::ImportCheckWorker> warm = nullptr);

enum class NoCheck { no, yes };

// Before `upload` publishes `variants` (of `variants_root`): refuses (util::FatalError naming
// each variant and why) when a variant's last load check failed, a variant was set aside by
// the build, or a variant with no record of a check for its current files (hand-assembled,
// foreign, changed since) does not load with `python` now. NoCheck::yes checks nothing and says
// so loudly. Variants that cannot be checked here (another backend, a missing kernel-depends)
// are warnings.
void check_variants_before_upload(const std::vector<std::filesystem::path>& variants,
                                  const std::filesystem::path& variants_root,
                                  const std::string& python, NoCheck no_check);

}  // namespace kernelhub::cli::commands
