// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include <kernelhub/builder/command_runner.hpp>
#include <kernelhub/builder/cuda_arch.hpp>
#include <kernelhub/types/version.hpp>
#include <kernelhub/util/expected.hpp>

// The CUDA toolkit a cuda variant is compiled with: where nvcc is, its CUDA version and the
// GPU archs it can compile for (CUDA 13 dropped everything below 7.5).
namespace kernelhub::builder {

struct CudaToolkit {
  std::filesystem::path nvcc;       // absolute
  types::Version version;           // "release 13.0" of `nvcc --version`
  std::vector<CudaArch> supported;  // `nvcc --list-gpu-arch`, plain major.minor archs
};

// Where nvcc is looked for, in order: PATH, $CUDA_HOME/bin, /usr/local/cuda/bin (the places
// torch.utils.cpp_extension looks, with the nvcc a user put in PATH first).
std::optional<std::filesystem::path> find_nvcc(CommandRunner& runner,
                                               std::optional<std::string_view> cuda_home);

// "Cuda compilation tools, release 13.0, V13.0.88" -> 13.0. Errors name what was expected.
util::Expected<types::Version> parse_nvcc_version(std::string_view output);

// "compute_75\ncompute_80\n..." -> 7.5, 8.0, ...; names with a letter suffix ("compute_90a")
// are left out, as the base arch stands for them.
std::vector<CudaArch> parse_nvcc_arch_list(std::string_view output);

// Finds nvcc and asks it for its version and archs; nullopt when there is no nvcc. A nvcc
// that cannot report its version is an error naming it.
util::Expected<std::optional<CudaToolkit>> detect_cuda_toolkit(
    CommandRunner& runner, std::optional<std::string_view> cuda_home);

}  // namespace kernelhub::builder
