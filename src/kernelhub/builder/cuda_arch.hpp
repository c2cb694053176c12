// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <compare>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/types/version.hpp>
#include <kernelhub/util/expected.hpp>

// CUDA compute capabilities as build.toml and metadata.json write them ("8.0", "9.0a",
// "10.0f", "12.1+PTX"), and the pure arithmetic on them that a CUDA build needs: the default
// list of a toolkit, the reference's "loose intersection" with a kernel's cuda-capabilities,
// the nvcc -gencode flags and the numeric order of metadata.json's backend.archs.
namespace kernelhub::builder {

struct CudaArch {
  unsigned major = 0;
  unsigned minor = 0;
  std::string suffix;  // "", "a" (arch-specific) or "f" (family-specific)
  bool ptx = false;    // "+PTX": also embed PTX for this arch, for JIT on newer GPUs

  // "9.0a": the arch without +PTX.
  std::string base() const;
  // "9.0a+PTX": as written in build.toml and metadata.json.
  std::string to_string() const;
  // "90a": as nvcc spells it after sm_ / compute_.
  std::string code() const;

  // Numeric: 7.5 < 8.0 < 9.0 < 9.0a < 10.0 < 12.0; +PTX after the plain arch.
  friend std::strong_ordering operator<=>(const CudaArch& a, const CudaArch& b);
  friend bool operator==(const CudaArch& a, const CudaArch& b) = default;
};

// "8.0", "9.0a", "12.1+PTX" (the suffix is case-sensitive, as in the reference's CMake).
// Errors: "invalid cuda capability \"x\"".
util::Expected<CudaArch> parse_cuda_arch(std::string_view text);
util::Expected<std::vector<CudaArch>> parse_cuda_archs(const std::vector<std::string>& texts);
std::vector<std::string> to_strings(const std::vector<CudaArch>& archs);

// The reference's default capability list for a CUDA toolkit version, read from the embedded
// data/cuda_capabilities.json (with +PTX where the reference puts it).
util::Expected<std::vector<CudaArch>> default_cuda_archs(const types::Version& cuda);

// The reference's cuda_archs_loose_intersection (kernel-builder utils.cmake, from vLLM): for
// each target arch, the highest kernel arch not above it with the same major version (any
// major for a +PTX kernel arch, whose PTX JIT-compiles forward); an "a"/"f" kernel arch is
// kept when its base is a target, and replaces that target. +PTX is re-applied to the
// kernel archs that asked for it; the result is sorted numerically. `targets` carry no +PTX.
std::vector<CudaArch> loose_intersection(const std::vector<CudaArch>& kernel,
                                         const std::vector<CudaArch>& targets);

// The archs of `archs` whose base major.minor nvcc lists in `supported` (`nvcc
// --list-gpu-arch`, as "7.5", "9.0"...): "9.0a" needs compute_90. The others go to `dropped`.
std::vector<CudaArch> supported_by_nvcc(const std::vector<CudaArch>& archs,
                                        const std::vector<CudaArch>& supported,
                                        std::vector<CudaArch>& dropped);

// The nvcc flags compiling for `archs`: "-gencode=arch=compute_80,code=sm_80" per arch, plus
// "-gencode=arch=compute_90,code=compute_90" (PTX) for each +PTX arch. One token per flag.
std::vector<std::string> gencode_flags(const std::vector<CudaArch>& archs);

// `names` de-duplicated and sorted numerically ("7.5" < "8.0" < "10.0" < "12.0+PTX"), for
// metadata.json's backend.archs (the reference sorts as strings, putting "10.0" first).
// Names that are not capabilities sort after the others, as strings.
std::vector<std::string> sorted_arch_names(std::vector<std::string> names);

}  // namespace kernelhub::builder
