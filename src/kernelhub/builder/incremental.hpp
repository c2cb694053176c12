// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <kernelhub/builder/command_runner.hpp>
#include <kernelhub/types/backend.hpp>
#include <kernelhub/util/expected.hpp>

// What makes a second `build` of an unchanged kernel cheap: CMake configures a build tree
// once (its own build.ninja re-runs it when a CMakeLists.txt changes, and the generated
// project is only rewritten when its content changes), and ninja runs as many jobs as the
// machine's cores and free memory allow.
namespace kernelhub::builder {

// The configure command as one line, stored in the build tree after a successful configure.
inline constexpr const char* k_configure_stamp = "kernelhub-configure.txt";

struct IncrementalBuild {
  // The stamp to write once the commands succeed; nullopt when the configure was skipped.
  std::optional<std::string> configure_stamp;
};

// `commands` is cmake_commands()' {configure, ninja} (plus any arguments added to them):
// drops the configure when `build_tree` was configured by exactly that command and still has
// its build.ninja, removes a build tree whose CMakeCache.txt was made in another folder (the
// kernel folder was copied or moved with its build/, which CMake would refuse), and adds `-j N` to the ninja command (job_limit for the backend's
// compiler) unless it already has a -j.
IncrementalBuild prepare_incremental(std::vector<Command>& commands,
                                     const std::filesystem::path& build_tree,
                                     types::Backend backend);

// After prepare_incremental: ninja's progress names `backend` and shows sources relative to
// `kernel_dir` ("[cuda 37/90] csrc/gelu.cu"), and
// `on_compile` (when set) runs once it is known that something will compile: now when the tree
// is to be configured (built from scratch), else at ninja's first step. A no-op rebuild never
// calls it.
void watch_for_work(std::vector<Command>& commands, types::Backend backend,
                    const std::filesystem::path& kernel_dir,
                    const std::function<void()>& on_compile);

// Records the configure after the build succeeded.
util::Expected<void> finish_incremental(const IncrementalBuild& build,
                                        const std::filesystem::path& build_tree);

}  // namespace kernelhub::builder
