// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string_view>

#include <kernelhub/codegen/create_project.hpp>
#include <kernelhub/codegen/file_set.hpp>
#include <kernelhub/config/build_config.hpp>
#include <kernelhub/types/backend.hpp>
#include <kernelhub/util/expected.hpp>

// The build project of one backend of a [tvm-ffi] kernel (builder.md §5, TVM-FFI row),
// rendered from templates/project/tvm_ffi/: a CMake project building the shared library
// `<id>.so` (no "lib" prefix, TVM_FFI_EXTENSION_NAME=<id> defined for the sources whose text
// (as `read_source` gives it) says it, all of them without a reader; linked through
// tvm_ffi_configure_target; its CMake target's name has no id in it, so a new id relinks and
// recompiles only those sources) from the [tvm-ffi] sources and the backend's [kernel.*] sources,
// and tvm-ffi-ext/<python name>/_ops.py, which opens that library with tvm_ffi.load_module.
namespace kernelhub::builder {

// Source paths are relative to `kernel_dir`, which should be absolute. `cuda` (cuda backend
// only) carries the nvcc flags of each kernel; a cuda kernel missing from it is left out.
// Errors: the config is not [tvm-ffi], or the kernel id is not a Python identifier.
util::Expected<codegen::FileSet> tvm_ffi_project(const config::BuildConfig& config,
                                                 const std::filesystem::path& kernel_dir,
                                                 std::string_view unique_id,
                                                 types::Backend backend,
                                                 const codegen::CudaProjectOptions* cuda = nullptr,
                                                 const codegen::SourceReader& read_source = {});

}  // namespace kernelhub::builder
