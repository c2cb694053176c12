// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <kernelhub/builder/cuda_plan.hpp>
#include <kernelhub/builder/torch_environment.hpp>
#include <kernelhub/builder/tvm_ffi_environment.hpp>
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
  std::optional<CudaToolkit> cuda_toolkit;  // nvcc with its version and archs (cuda variants)
  bool hipcc = false;
  bool icpx = false;
  // apache-tvm-ffi in the build's Python ([tvm-ffi] kernels only); absent: not importable.
  std::optional<TvmFfiEnvironment> tvm_ffi;
};

enum class VariantKind { arch, noarch };

struct PlannedVariant {
  types::Backend backend = types::Backend::cpu;
  VariantKind kind = VariantKind::arch;
  std::string name;  // "torch215-cxx11-cpu-x86_64-linux", "torch-cpu"
  // Stable-ABI variants ("torch-stable-abi211-cpu-x86_64-linux"): the torch.stable-abi version
  // compiled for (TORCH_TARGET_VERSION). Empty for the others.
  std::optional<types::Version> stable_abi;
  // cuda variants: nvcc, and the archs and nvcc flags of each kernel. Empty for the others.
  std::optional<CudaBuild> cuda = std::nullopt;
};

struct SkippedBackend {
  types::Backend backend = types::Backend::cpu;
  std::string reason;  // lowercase, e.g. "nvcc was not found in PATH; install the CUDA toolkit"
  // A problem of the kernel's config rather than of this machine (an empty capability set):
  // the build fails with it instead of going on without the backend.
  bool is_error = false;
};

struct BuildPlan {
  std::vector<PlannedVariant> variants;  // in general.backends order
  std::vector<SkippedBackend> skipped;
};

// [torch-noarch]: `torch-<backend>` for every backend. [torch]: a backend without [kernel.*]
// of its own is noarch too (`torch-<backend>`, as the reference's Nix selects it); the cpu
// backend is built when torch is present and inside torch.minver/maxver, named after it, or
// as a stable-ABI variant when torch.stable-abi names it (refused for an older torch); the
// others are skipped with the reason. cuda is built when nvcc and a CUDA torch of the same
// CUDA major version are present, named after torch's CUDA (cu132), with the archs and flags
// of each kernel; a kernel whose capabilities leave nothing to compile is a skip marked
// `is_error`. [tvm-ffi]: cpu and cuda when tvm_ffi imports (tvm_ffi.hpp), else skipped.
BuildPlan plan_build(const config::BuildConfig& config, const HostTools& host);

// Why `torch` cannot build `backend` of this [torch] kernel (torch.minver/maxver, a stable-ABI
// version newer than torch), or nothing when it can.
std::optional<std::string> torch_refusal(const config::BuildConfig& config,
                                         const TorchEnvironment& torch, types::Backend backend);

// The variant `torch` builds for `backend`: the stable-ABI name when torch.stable-abi names
// the backend, else the arch name.
PlannedVariant torch_variant(const config::BuildConfig& config, const TorchEnvironment& torch,
                             types::Backend backend);

// The Torch arch variant name of `backend` for this Torch ("torch215-cxx11-cpu-x86_64-linux";
// no "-cxx11" off Linux, as the reference's generate_build_name).
std::string torch_arch_variant_name(const TorchEnvironment& torch, types::Backend backend);

}  // namespace kernelhub::builder
