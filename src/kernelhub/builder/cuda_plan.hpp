// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <kernelhub/builder/cuda_arch.hpp>
#include <kernelhub/builder/cuda_toolkit.hpp>
#include <kernelhub/builder/torch_environment.hpp>
#include <kernelhub/config/build_config.hpp>

// What the cuda variant of a [torch] kernel compiles, decided before anything runs: whether
// this machine can build it at all (nvcc, a CUDA torch of the same major version, the
// kernel's CUDA bounds) and, per [kernel.*], the archs and nvcc flags. Pure functions.
namespace kernelhub::builder {

struct CudaKernelTarget {
  std::string kernel;                   // the <name> of [kernel.<name>]
  std::vector<CudaArch> archs;          // what nvcc compiles it for
  std::vector<std::string> nvcc_flags;  // -gencode flags, then the kernel's cuda-flags
};

struct CudaBuild {
  std::filesystem::path nvcc;
  types::Version toolkit_version;
  std::vector<CudaKernelTarget> kernels;  // compiled cuda kernels, in file order
  // metadata.json's backend.archs: every kernel's archs, de-duplicated and sorted
  // numerically, "+PTX" kept as the reference writes it.
  std::vector<std::string> archs;
  // Things the user should know but that do not stop the build (a minor CUDA mismatch with
  // torch, archs nvcc cannot compile, kernels left out by cuda-minver).
  std::vector<std::string> warnings;
};

// Why the cuda backend cannot be built here, naming what to install or which bound failed;
// nullopt when it can. A CUDA minor version that differs between nvcc and torch is not a
// reason (torch.utils.cpp_extension only warns); a major one is (cpp_extension refuses it).
std::optional<std::string> cuda_skip_reason(const config::BuildConfig& config,
                                            const std::optional<TorchEnvironment>& torch,
                                            const std::optional<CudaToolkit>& toolkit);

// The archs and flags of each cuda kernel. Fails like the reference when a kernel's
// cuda-capabilities leave nothing to compile, or are not capabilities at all.
util::Expected<CudaBuild> plan_cuda_build(const config::BuildConfig& config,
                                          const TorchEnvironment& torch,
                                          const CudaToolkit& toolkit);

// "13.0": major.minor, as CUDA versions are written in messages and variant names.
std::string cuda_version_string(const types::Version& version);

}  // namespace kernelhub::builder
