// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include <kernelhub/config/build_config.hpp>
#include <kernelhub/variants/compliance_matrix.hpp>

// The variant names a kernel's build.toml yields over the compliance matrix, by the rules of
// the reference's Nix builder (builder.md §4: nix-builder/lib/build.nix
// filterApplicableBuildSets and lib/variants/{torch,tvm-ffi}.nix).
namespace kernelhub::variants {

// One matrix config on one system that the kernel builds for.
struct BuildSet {
  const MatrixConfig* config = nullptr;  // points into the matrix it was made from
  std::string system;                    // "x86_64-linux"
};

struct ProducedVariant {
  std::string name;    // "torch212-cxx11-cu126-x86_64-linux", "torch-metal"
  BuildSet build_set;  // the first build set that yields `name`
};

struct SystemVariants {
  std::string system;
  // Unique names in the order the reference's `variants` flake output lists them.
  std::vector<ProducedVariant> variants;
  // Unique arch names of the same build sets (the `archVariants` output, for dev shells).
  std::vector<std::string> arch_variants;
};

// The build sets of `system` the kernel builds for: backend in general.backends, CUDA within
// general.cuda bounds, Torch within torch bounds, tvm-ffi kernels only on configs with a
// tvm-ffi version; then, for backends built against the Torch stable ABI, only the newest Torch
// per backend version (those come first, ordered by "<backend>-<version>").
std::vector<BuildSet> applicable_build_sets(const config::BuildConfig& config,
                                            const ComplianceMatrix& matrix, const std::string& system);

// The variant name a build set yields: tvm-ffi arch; Torch stable-ABI arch when the backend
// has a [kernel.*] and a stable ABI version; Torch arch when it has a [kernel.*]; otherwise
// the noarch "torch-<backend>".
std::string kernel_variant_name(const config::BuildConfig& config, const BuildSet& build_set);
// The reference's `kernelArchVariant`: the tvm-ffi or Torch arch name, whatever the kernels.
std::string arch_variant_name(const config::BuildConfig& config, const BuildSet& build_set);

// Every system of the matrix with the variants it yields (systems yielding none included).
std::vector<SystemVariants> variants_for_config(const config::BuildConfig& config,
                                                const ComplianceMatrix& matrix);

// The Torch stable ABI version the kernel uses for `backend`, if any (`torch.stable-abi`).
std::optional<types::Version> stable_abi_for(const config::BuildConfig& config, types::Backend backend);

}  // namespace kernelhub::variants
