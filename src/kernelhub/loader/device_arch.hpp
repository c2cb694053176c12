// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <kernelhub/metadata/metadata.hpp>

// The GPU this process runs on and whether a build's `backend.archs` covers it. The reference
// only checks this after choosing a variant (and older releases never did, so the process dies
// at the first call); we reject such a variant during the choice, with the reason in the trace.
namespace kernelhub::loader {

struct CudaCapability {
  int major = 0;
  int minor = 0;
  friend auto operator<=>(const CudaCapability&, const CudaCapability&) = default;
};

struct DeviceArch {
  std::optional<CudaCapability> cuda;  // set when a CUDA device is visible
  std::optional<std::string> rocm;     // gfx arch without feature flags ("gfx90a")
};

// Whether one arch string ("8.0", "9.0a", "10.0f", "7.5+PTX") runs on `capability`; nullopt
// when the string is in no known form.
std::optional<bool> cuda_arch_supports(const std::string& arch, CudaCapability capability);

// Why `metadata`'s archs exclude `device`, or nullopt when they do not (no archs, no device
// of that kind, or no arch string understood).
std::optional<std::string> arch_mismatch(const metadata::Metadata& metadata,
                                         const DeviceArch& device);

}  // namespace kernelhub::loader
