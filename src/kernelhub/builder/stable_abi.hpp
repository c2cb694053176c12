// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

#include <kernelhub/builder/torch_environment.hpp>
#include <kernelhub/types/backend.hpp>
#include <kernelhub/types/version.hpp>

// Torch stable-ABI variants (builder.md §2.3, §4): a [torch] backend with a `torch.stable-abi`
// version is compiled against the stable C shim only, targeting that version, so one build
// loads under every torch at least as new. The compile definition itself is the project's
// (codegen::torch_target_version).
namespace kernelhub::builder {

// "torch-stable-abi211-cpu-x86_64-linux": no "-cxx11", even on Linux.
std::string stable_abi_variant_name(const types::Version& abi, const TorchEnvironment& torch,
                                    types::Backend backend);

// Why `torch` cannot build a stable-ABI variant targeting `abi` (a torch older than the ABI it
// would target has no such ABI to compile against), or nothing when it can.
std::optional<std::string> stable_abi_refusal(const variants::ReleaseVersion& torch,
                                              const types::Version& abi);

}  // namespace kernelhub::builder
