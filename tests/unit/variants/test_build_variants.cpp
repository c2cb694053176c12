// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <map>

#include <kernelhub/variants/build_variants.hpp>

namespace {

using namespace kernelhub;
using namespace kernelhub::variants;
using types::Backend;

types::Version ver(const char* text) { return types::Version::parse(text).value(); }

config::Kernel kernel_for(Backend backend) {
  config::Kernel kernel;
  kernel.name = std::string("k_") + std::string(types::to_string(backend));
  kernel.backend = backend;
  return kernel;
}

config::BuildConfig make_config(std::vector<Backend> backends, config::Framework framework,
                                std::vector<Backend> kernel_backends) {
  config::General general{.name = types::KernelName::parse("relu").value()};
  general.backends = std::move(backends);
  std::vector<config::Kernel> kernels;
  for (const auto backend : kernel_backends) {
    kernels.push_back(kernel_for(backend));
  }
  return config::BuildConfig{std::move(general), std::move(framework), std::move(kernels)};
}

const ComplianceMatrix& matrix() {
  static const ComplianceMatrix builtin = builtin_compliance_matrix().value();
  return builtin;
}

// system -> names, in the reference's order.
std::map<std::string, std::vector<std::string>> names_by_system(const config::BuildConfig& config) {
  std::map<std::string, std::vector<std::string>> names;
  for (const auto& system : variants_for_config(config, matrix())) {
    auto& list = names[system.system];
    for (const auto& variant : system.variants) {
      list.push_back(variant.name);
    }
  }
  return names;
}

const std::vector<Backend> k_bundle_backends = {Backend::cpu, Backend::cuda, Backend::metal,
                                                Backend::rocm, Backend::xpu};

// The bundle variants are the reference's nix-builder/build-variants.json (24 names).
TEST(BuildVariants, BundleVariantsMatchBuildVariantsJson) {
  const auto config = make_config(k_bundle_backends, config::Torch{}, k_bundle_backends);
  std::map<std::string, std::vector<std::string>> bundle;
  for (const auto& system : variants_for_config(config, matrix())) {
    for (const auto& variant : system.variants) {
      if (variant.build_set.config->bundle) {
        bundle[system.system].push_back(variant.name);
      }
    }
  }
  const std::map<std::string, std::vector<std::string>> expected = {
      {"aarch64-darwin",
       {"torch212-cpu-aarch64-darwin", "torch212-metal-aarch64-darwin", "torch213-cpu-aarch64-darwin",
        "torch213-metal-aarch64-darwin"}},
      {"aarch64-linux",
       {"torch212-cxx11-cpu-aarch64-linux", "torch212-cxx11-cu126-aarch64-linux",
        "torch212-cxx11-cu130-aarch64-linux", "torch212-cxx11-cu132-aarch64-linux",
        "torch213-cxx11-cpu-aarch64-linux", "torch213-cxx11-cu126-aarch64-linux",
        "torch213-cxx11-cu130-aarch64-linux", "torch213-cxx11-cu132-aarch64-linux"}},
      {"x86_64-linux",
       {"torch212-cxx11-cpu-x86_64-linux", "torch212-cxx11-cu126-x86_64-linux",
        "torch212-cxx11-cu130-x86_64-linux", "torch212-cxx11-cu132-x86_64-linux",
        "torch212-cxx11-rocm71-x86_64-linux", "torch212-cxx11-rocm72-x86_64-linux",
        "torch212-cxx11-xpu20253-x86_64-linux", "torch213-cxx11-cpu-x86_64-linux",
        "torch213-cxx11-cu126-x86_64-linux", "torch213-cxx11-cu130-x86_64-linux",
        "torch213-cxx11-cu132-x86_64-linux", "torch213-cxx11-rocm71-x86_64-linux",
        "torch213-cxx11-rocm72-x86_64-linux", "torch213-cxx11-xpu20260-x86_64-linux"}},
  };
  EXPECT_EQ(bundle, expected);
  // The non-bundle Torch 2.11 CPU build comes first on x86_64-linux.
  EXPECT_EQ(names_by_system(config)["x86_64-linux"].front(), "torch211-cxx11-cpu-x86_64-linux");
}

// examples/kernels/relu-torch-stable-abi: stable ABI 2.11 everywhere, no metal kernel.
TEST(BuildVariants, StableAbiKeepsTheNewestTorchPerBackendVersion) {
  config::Torch torch;
  torch.stable_abi = ver("2.11");
  const auto config = make_config(k_bundle_backends, torch,
                                  {Backend::xpu, Backend::rocm, Backend::cpu, Backend::cuda});
  auto names = names_by_system(config);
  EXPECT_EQ(names["x86_64-linux"], (std::vector<std::string>{
                                       "torch-stable-abi211-cpu-x86_64-linux",
                                       "torch-stable-abi211-cu126-x86_64-linux",
                                       "torch-stable-abi211-cu130-x86_64-linux",
                                       "torch-stable-abi211-cu132-x86_64-linux",
                                       "torch-stable-abi211-rocm71-x86_64-linux",
                                       "torch-stable-abi211-rocm72-x86_64-linux",
                                       "torch-stable-abi211-xpu20253-x86_64-linux",
                                       "torch-stable-abi211-xpu20260-x86_64-linux",
                                   }));
  EXPECT_EQ(names["aarch64-darwin"],
            (std::vector<std::string>{"torch-stable-abi211-cpu-aarch64-darwin", "torch-metal"}));
  // The deduplication keeps Torch 2.13 for CPU, not the 2.11 or 2.12 build sets.
  const auto sets = applicable_build_sets(config, matrix(), "x86_64-linux");
  EXPECT_EQ(sets.front().config->torch.text, "2.13");
}

TEST(BuildVariants, PerBackendStableAbiLeavesOtherBackendsPerTorch) {
  config::Torch torch;
  torch.stable_abi = std::map<Backend, types::Version>{{Backend::cuda, ver("2.12")}};
  const auto config = make_config({Backend::cuda, Backend::cpu}, torch, {Backend::cuda, Backend::cpu});
  EXPECT_EQ(names_by_system(config)["aarch64-linux"],
            (std::vector<std::string>{
                "torch-stable-abi212-cu126-aarch64-linux", "torch-stable-abi212-cu130-aarch64-linux",
                "torch-stable-abi212-cu132-aarch64-linux", "torch212-cxx11-cpu-aarch64-linux",
                "torch213-cxx11-cpu-aarch64-linux"}));
}

// examples/kernels/relu-torch-bounds: torch minver = maxver = 2.12.
TEST(BuildVariants, TorchAndCudaBoundsFilterBuildSets) {
  config::Torch torch;
  torch.minver = ver("2.12");
  torch.maxver = ver("2.12");
  auto config = make_config({Backend::cuda, Backend::rocm}, torch, {Backend::cuda, Backend::rocm});
  auto names = names_by_system(config);
  EXPECT_EQ(names["x86_64-linux"], (std::vector<std::string>{
                                       "torch212-cxx11-cu126-x86_64-linux",
                                       "torch212-cxx11-cu130-x86_64-linux",
                                       "torch212-cxx11-cu132-x86_64-linux",
                                       "torch212-cxx11-rocm71-x86_64-linux",
                                       "torch212-cxx11-rocm72-x86_64-linux",
                                   }));
  EXPECT_TRUE(names["aarch64-darwin"].empty());

  config.general.cuda = config::BackendGeneral{.minver = ver("13.0"), .maxver = ver("13.0")};
  EXPECT_EQ(names_by_system(config)["aarch64-linux"],
            (std::vector<std::string>{"torch212-cxx11-cu130-aarch64-linux"}));
}

// examples/kernels/relu-tvm-ffi.
TEST(BuildVariants, TvmFfiUsesConfigsWithATvmFfiVersion) {
  config::TvmFfi tvm_ffi;
  tvm_ffi.src = {"tvm-ffi-ext/tvm_ffi_binding.cpp"};
  const auto config = make_config({Backend::cpu, Backend::cuda, Backend::xpu}, tvm_ffi,
                                  {Backend::cuda, Backend::cpu, Backend::xpu});
  auto names = names_by_system(config);
  EXPECT_EQ(names["x86_64-linux"], (std::vector<std::string>{
                                       "tvm-ffi01-cpu-x86_64-linux", "tvm-ffi01-cu126-x86_64-linux",
                                       "tvm-ffi01-cu130-x86_64-linux", "tvm-ffi01-cu132-x86_64-linux",
                                       "tvm-ffi01-xpu20253-x86_64-linux"}));
  EXPECT_EQ(names["aarch64-darwin"], (std::vector<std::string>{"tvm-ffi01-cpu-aarch64-darwin"}));
}

// examples/kernels/relu-tpu and python-only kernels: noarch names per backend.
TEST(BuildVariants, NoarchKernelsYieldOneNamePerBackend) {
  const auto config = make_config({Backend::cuda, Backend::tpu, Backend::metal}, config::TorchNoarch{}, {});
  auto names = names_by_system(config);
  EXPECT_EQ(names["x86_64-linux"], (std::vector<std::string>{"torch-tpu", "torch-cuda"}));
  EXPECT_EQ(names["aarch64-linux"], (std::vector<std::string>{"torch-cuda"}));
  EXPECT_EQ(names["aarch64-darwin"], (std::vector<std::string>{"torch-metal"}));
  // Dev shells still need one arch name per build set.
  const auto systems = variants_for_config(config, matrix());
  EXPECT_EQ(systems[0].arch_variants, (std::vector<std::string>{"torch212-metal-aarch64-darwin",
                                                                "torch213-metal-aarch64-darwin"}));
}

TEST(BuildVariants, TpuKernelBuildsAnArchVariant) {
  const auto config = make_config({Backend::tpu}, config::Torch{}, {Backend::tpu});
  EXPECT_EQ(names_by_system(config)["x86_64-linux"],
            (std::vector<std::string>{"torch211-cxx11-tpu-x86_64-linux"}));
}

TEST(BuildVariants, BackendsOutsideTheMatrixYieldNothing) {
  const auto config = make_config({Backend::neuron}, config::TorchNoarch{}, {});
  for (const auto& system : variants_for_config(config, matrix())) {
    EXPECT_TRUE(system.variants.empty()) << system.system;
  }
}

}  // namespace
