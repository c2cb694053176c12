// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <kernelhub/config/build_config.hpp>
#include <kernelhub/variants/build_host.hpp>

// Which variants a local (CMake) build on this machine can produce for a kernel: one per
// backend in general.backends, named the way the reference's CMake templates name them
// (templates/{torch,tvm_ffi}/build-variants.cmake), from the active torch and the compilers
// found. Where a backend cannot be built here, the reason says what is missing.
namespace kernelhub::variants {

struct LocalVariant {
  types::Backend backend = types::Backend::cpu;
  std::string name;    // set when buildable
  std::string reason;  // set when not: "nvcc not found in PATH or CUDA_HOME"

  bool buildable() const { return reason.empty(); }

  friend bool operator==(const LocalVariant&, const LocalVariant&) = default;
};

// "x86_64-linux": the normalised cpu (x86_64|amd64|AMD64, aarch64|arm64|ARM64) and os, or
// nullopt for a cpu the build does not support.
std::optional<std::string> local_system_string(const SystemInfo& system);

std::vector<LocalVariant> local_variants(const config::BuildConfig& config, const BuildHost& host);

// The one rule for the CUDA part of a CUDA variant's name ("cu132"), used by list-variants and
// build alike: a torch kernel is named after the CUDA its torch was built with
// (torch.version.cuda), which is what the variant's users must have, whatever nvcc compiled
// it (build refuses only a different major version); a kernel without torch (tvm-ffi) after
// nvcc. nullopt when the one it needs is unknown.
std::optional<ReleaseVersion> cuda_variant_release(const std::optional<ReleaseVersion>& torch_cuda,
                                                   const std::optional<ReleaseVersion>& nvcc,
                                                   bool torch_kernel);

}  // namespace kernelhub::variants
