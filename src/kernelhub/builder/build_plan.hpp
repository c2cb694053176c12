// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <kernelhub/builder/torch_environment.hpp>
#include <kernelhub/config/build_config.hpp>
#include <kernelhub/types/backend.hpp>

// Which of a kernel's backends this machine builds, under which variant names, and why the
// others are left out: a pure function of the config and what was found on the machine, so
// every skip is stated, never silent.
namespace kernelhub::builder {

struct HostTools {
  std::optional<TorchEnvironment> torch;  // absent: no Python with torch (noarch needs none)
  std::string os = "linux";               // this machine's OS, as variant names spell it
  bool nvcc = false;
  bool hipcc = false;
  bool icpx = false;
};

enum class VariantKind { arch, noarch };

struct PlannedVariant {
  types::Backend backend = types::Backend::cpu;
  VariantKind kind = VariantKind::arch;
  std::string name;  // "torch215-cxx11-cpu-x86_64-linux", "torch-cpu"
};

struct SkippedBackend {
  types::Backend backend = types::Backend::cpu;
  std::string reason;  // lowercase, e.g. "nvcc was not found in PATH; install the CUDA toolkit"
};

struct BuildPlan {
  std::vector<PlannedVariant> variants;  // in general.backends order
  std::vector<SkippedBackend> skipped;
};

// [torch-noarch]: `torch-<backend>` for every backend. [torch]: the cpu backend when torch is
// present, named after it; the others are skipped with the reason. [tvm-ffi]: all skipped.
BuildPlan plan_build(const config::BuildConfig& config, const HostTools& host);

// The Torch arch variant name of `backend` for this Torch ("torch215-cxx11-cpu-x86_64-linux";
// no "-cxx11" off Linux, as the reference's generate_build_name).
std::string torch_arch_variant_name(const TorchEnvironment& torch, types::Backend backend);

}  // namespace kernelhub::builder
