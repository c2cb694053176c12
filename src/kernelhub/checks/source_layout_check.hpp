// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>

#include <kernelhub/config/build_config.hpp>
#include <kernelhub/util/diagnostic.hpp>

// The source-layout check (builder.md §6.2, extended): what must and must not exist in a
// kernel's folder before it is built.
// - <ext>/<python name>/__init__.py must exist (ext: torch-ext, or tvm-ffi-ext for tvm-ffi);
// - <ext>/<python name>/<python name> must not (the old nested layout);
// - every `src` file of [torch], [tvm-ffi] and [kernel.*] exists, and every `include` folder;
//   reported at the build.toml key that lists it;
// - the Python package holds no compiled libraries (*.so, *.pyd, *.dylib) nor a `build`
//   folder: they would be copied into every variant beside, or instead of, what the build
//   made.
// Paths in diagnostics are relative to the kernel folder.
namespace kernelhub::checks {

// "torch-ext" or "tvm-ffi-ext".
std::string python_extension_dir(const config::BuildConfig& config);

// <kernel_dir>/<ext>/<python name>.
std::filesystem::path python_package_dir(const std::filesystem::path& kernel_dir,
                                         const config::BuildConfig& config);

void check_source_layout(const std::filesystem::path& kernel_dir,
                         const config::LoadedBuildConfig& loaded, util::DiagnosticSink& sink);

}  // namespace kernelhub::checks
