// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <kernelhub/builder/command_runner.hpp>
#include <kernelhub/config/build_config.hpp>
#include <kernelhub/metadata/metadata.hpp>

namespace kernelhub::builder {

// Where the kernel's source came from, for `provenance.build` and the compilers' clock.
struct BuildSource {
  std::optional<std::string> origin;              // KernelGitState::origin
  std::optional<std::int64_t> source_date_epoch;  // source_date_epoch()
};

// The SOURCE_DATE_EPOCH of a build: the environment's when it holds a number (the
// reproducible-builds convention: whoever sets it chose the time), else the commit's time,
// else none (a folder without git: __DATE__ is then the day of the build).
std::optional<std::int64_t> source_date_epoch(std::optional<std::int64_t> commit_time);

// Gives every command SOURCE_DATE_EPOCH, so __DATE__ and __TIME__ (GCC, Clang, nvcc's host
// compiler) say the commit's time instead of the build's.
void set_source_date_epoch(std::vector<Command>& commands, const BuildSource& source);

// `provenance.build` of one variant: `source`, and for a compiled variant the toolchain and
// flags that compat/reproducible.cmake recorded in `build_tree`/kernelhub-toolchain.json,
// with `tools` added (the torch release it was compiled against). A missing or unreadable
// record leaves the toolchain out; the variant is not refused for it.
metadata::BuildProvenance build_provenance(const BuildSource& source,
                                           const std::optional<std::filesystem::path>& build_tree,
                                           const std::map<std::string, std::string>& tools);

// The metadata.json of one variant (builder.md §3), without its digest: general fields,
// python-depends and kernel-depends of `backend`, backend archs for noarch cuda (cuda-
// capabilities) and rocm (rocm-archs), provenance of the builder and, from git, the kernel.
metadata::Metadata variant_metadata(const config::BuildConfig& config, types::Backend backend,
                                    const std::string& id,
                                    const std::optional<metadata::GitStatus>& kernel_git,
                                    const std::string& builder_version);

}  // namespace kernelhub::builder
