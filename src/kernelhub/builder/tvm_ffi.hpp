// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include <kernelhub/builder/build_plan.hpp>
#include <kernelhub/types/backend.hpp>

// [tvm-ffi] kernels (builder.md §4, §5): what kernel-builder build says about them.
namespace kernelhub::builder {

// Why `backend` of a [tvm-ffi] kernel is not built here. The reference's tvm-ffi preamble only
// knows cpu, cuda and xpu, so the other backends can never be built; for those three the
// reason is that this builder does not generate tvm-ffi projects yet.
std::string tvm_ffi_skip_reason(types::Backend backend, const HostTools& host);

}  // namespace kernelhub::builder
