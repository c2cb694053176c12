// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <kernelhub/util/expected.hpp>
#include <kernelhub/variants/release_version.hpp>

// What the Python a build uses says about its Torch and platform: enough to name the variant
// and to point CMake at Torch's package.
namespace kernelhub::builder {

struct TorchEnvironment {
  variants::ReleaseVersion torch_version;  // major.minor of torch.__version__
  std::string torch_release;               // torch.__version__ itself ("2.15.0+cu132")
  bool cxx11_abi = true;                   // torch._C._GLIBCXX_USE_CXX11_ABI
  std::optional<std::string> cuda;         // torch.version.cuda
  std::optional<std::string> hip;          // torch.version.hip
  std::string cpu;                         // normalised: x86_64, aarch64
  std::string os;                          // linux, darwin, windows
  std::string cmake_prefix_path;           // torch.utils.cmake_prefix_path
  std::string python_include;              // sysconfig's "include" path: Python.h's folder
};

// The Python program whose one line of JSON parse_torch_probe reads.
std::string_view torch_probe_script();

// Parses the probe's output. Errors name the missing or malformed field.
util::Expected<TorchEnvironment> parse_torch_probe(std::string_view json_text);

// The CPU name as the reference's generate_build_name spells it in variant names (CMake's
// normalisation: amd64 -> x86_64, arm64 -> aarch64). Shared by the torch and tvm-ffi probes.
std::string normalise_cpu(const std::string& machine);

}  // namespace kernelhub::builder
