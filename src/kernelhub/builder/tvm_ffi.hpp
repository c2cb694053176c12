// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

#include <kernelhub/builder/build_plan.hpp>
#include <kernelhub/builder/tvm_ffi_environment.hpp>
#include <kernelhub/config/build_config.hpp>
#include <kernelhub/types/backend.hpp>
#include <kernelhub/types/version.hpp>

// [tvm-ffi] kernels (builder.md §1, §4, §5): which backends kernel-builder build makes of them
// here, under which variant names, and why not the others.
namespace kernelhub::builder {

// "tvm-ffi01-cpu-x86_64-linux", "tvm-ffi01-cu130-x86_64-linux": the reference's
// generate_build_name for tvm-ffi, whose CUDA part is nvcc's version (not torch's).
std::string tvm_ffi_variant_name(const TvmFfiEnvironment& tvm_ffi, types::Backend backend,
                                 const std::optional<types::Version>& cuda = std::nullopt);

// Why `backend` of a [tvm-ffi] kernel is not built on this host, or nothing when it is. The
// reference's tvm-ffi preamble only knows cpu, cuda and xpu, so the other backends can never
// be built; the three need apache-tvm-ffi in the build's Python, cuda needs nvcc inside
// general.cuda's bounds.
std::optional<std::string> tvm_ffi_skip_reason(const config::BuildConfig& config,
                                               types::Backend backend, const HostTools& host);

// Plans `backend` of a [tvm-ffi] kernel into `plan`: a variant, or a skip with its reason (a
// cuda kernel whose capabilities leave nothing to compile is a skip marked `is_error`).
void plan_tvm_ffi_backend(const config::BuildConfig& config, types::Backend backend,
                          const HostTools& host, BuildPlan& plan);

}  // namespace kernelhub::builder
