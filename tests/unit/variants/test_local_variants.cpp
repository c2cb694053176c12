// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/variants/local_variants.hpp>

namespace {

using namespace kernelhub;
using namespace kernelhub::variants;
using types::Backend;

ReleaseVersion rv(const char* text) { return ReleaseVersion::parse(text).value(); }

config::BuildConfig config_with(std::vector<Backend> backends, config::Framework framework,
                                std::vector<Backend> kernel_backends) {
  config::General general{.name = types::KernelName::parse("relu").value()};
  general.backends = std::move(backends);
  std::vector<config::Kernel> kernels;
  for (const auto backend : kernel_backends) {
    config::Kernel kernel;
    kernel.name = std::string(types::to_string(backend));
    kernel.backend = backend;
    kernels.push_back(kernel);
  }
  return config::BuildConfig{std::move(general), std::move(framework), std::move(kernels)};
}

BuildHost cuda_host(const char* torch = "2.12") {
  BuildHost host;
  host.python = "/venv/bin/python";
  host.system.torch_version = rv(torch);
  host.system.cxx11_abi = true;
  host.system.backend = SystemBackend{Backend::cuda, rv("12.8")};
  host.torch = TorchBuild{rv(torch), rv("12.8"), std::nullopt, std::nullopt, false, false};
  host.toolchains.nvcc = rv("12.9");
  return host;
}

const std::vector<Backend> k_backends = {Backend::cpu, Backend::cuda, Backend::rocm,
                                         Backend::xpu, Backend::metal};

TEST(LocalVariants, NamesBuildsLikeTheCMakeTemplates) {
  const auto config = config_with(k_backends, config::Torch{}, k_backends);
  const auto local = local_variants(config, cuda_host());
  ASSERT_EQ(local.size(), 5u);
  EXPECT_EQ(local[0], (LocalVariant{Backend::cpu, "torch212-cxx11-cpu-x86_64-linux", {}}));
  // The CUDA part comes from the CUDA torch was built with, as build names it (issue 13
  // item 8: list-variants said cu129, from nvcc, where build made cu128).
  EXPECT_EQ(local[1], (LocalVariant{Backend::cuda, "torch212-cxx11-cu128-x86_64-linux", {}}));
  EXPECT_EQ(local[2].reason, "torch 2.12 was built without ROCm");
  EXPECT_EQ(local[3].reason, "torch 2.12 was built without XPU");
  EXPECT_EQ(local[4].reason, "Metal builds need macOS, this is linux");
}

TEST(LocalVariants, OneRuleForTheCudaPartWithBuild) {
  EXPECT_EQ(cuda_variant_release(rv("13.2"), rv("13.0"), true), rv("13.2"));
  EXPECT_EQ(cuda_variant_release(rv("13.2"), rv("13.0"), false), rv("13.0"));  // tvm-ffi
  EXPECT_EQ(cuda_variant_release(std::nullopt, rv("13.0"), true), std::nullopt);
  // A different major version cannot build, as build says.
  const auto config = config_with(k_backends, config::Torch{}, k_backends);
  auto host = cuda_host();
  host.toolchains.nvcc = rv("13.0");
  EXPECT_EQ(local_variants(config, host)[1].reason,
            "nvcc is CUDA 13.0 but torch was built with CUDA 12.8");
}

TEST(LocalVariants, SaysWhatIsMissing) {
  const auto config = config_with(k_backends, config::Torch{}, k_backends);
  auto host = cuda_host();
  host.toolchains.nvcc.reset();
  EXPECT_EQ(local_variants(config, host)[1].reason, "nvcc not found in PATH or CUDA_HOME");

  host.torch.reset();
  EXPECT_EQ(local_variants(config, host)[0].reason, "torch is not installed for /venv/bin/python");
  host.python.clear();
  EXPECT_EQ(local_variants(config, host)[0].reason,
            "no Python interpreter answered (set KERNELHUB_PYTHON)");

  auto rocm = cuda_host();
  rocm.torch->cuda.reset();
  rocm.torch->hip = rv("7.1.25");
  EXPECT_EQ(local_variants(config, rocm)[2].reason, "hipcc not found in PATH");
  rocm.toolchains.hipcc = true;
  EXPECT_EQ(local_variants(config, rocm)[2].name, "torch212-cxx11-rocm71-x86_64-linux");
  EXPECT_EQ(local_variants(config, rocm)[1].reason, "torch 2.12 was built without CUDA");
}

TEST(LocalVariants, AppliesBoundsAndTheStableAbi) {
  config::Torch torch;
  torch.minver = types::Version::parse("2.13").value();
  auto config = config_with({Backend::cpu, Backend::cuda}, torch, {Backend::cpu, Backend::cuda});
  EXPECT_EQ(local_variants(config, cuda_host())[0].reason,
            "torch 2.12 is outside the kernel's torch bounds (2.13 to any)");

  torch.minver.reset();
  torch.stable_abi = types::Version::parse("2.11").value();
  config = config_with({Backend::cpu, Backend::cuda}, torch, {Backend::cpu, Backend::cuda});
  EXPECT_EQ(local_variants(config, cuda_host())[1].name, "torch-stable-abi211-cu128-x86_64-linux");
  EXPECT_EQ(local_variants(config, cuda_host("2.10"))[0].reason,
            "torch 2.10 is older than the stable ABI 2.11 the kernel targets");

  config.general.cuda = config::BackendGeneral{.maxver = types::Version::parse("12.8").value()};
  EXPECT_EQ(local_variants(config, cuda_host())[1].reason,
            "CUDA 12.9 is outside general.cuda bounds (any to 12.8)");
}

TEST(LocalVariants, NoarchNeedsNothing) {
  const auto config = config_with({Backend::cuda, Backend::metal}, config::TorchNoarch{}, {});
  BuildHost bare;
  const auto local = local_variants(config, bare);
  EXPECT_EQ(local[0], (LocalVariant{Backend::cuda, "torch-cuda", {}}));
  EXPECT_EQ(local[1], (LocalVariant{Backend::metal, "torch-metal", {}}));
}

TEST(LocalVariants, DarwinAndTvmFfiNames) {
  BuildHost mac;
  mac.python = "py";
  mac.system.cpu = "arm64";
  mac.system.os = "darwin";
  mac.system.torch_version = rv("2.13");
  mac.system.tvm_ffi_version = rv("0.1");
  mac.torch = TorchBuild{rv("2.13"), std::nullopt, std::nullopt, std::nullopt, true, false};
  const auto torch = local_variants(config_with({Backend::metal, Backend::cpu}, config::Torch{},
                                                {Backend::metal, Backend::cpu}),
                                    mac);
  EXPECT_EQ(torch[0].name, "torch213-metal-aarch64-darwin");
  EXPECT_EQ(torch[1].name, "torch213-cpu-aarch64-darwin");

  const auto tvm = local_variants(
      config_with({Backend::cpu, Backend::metal}, config::TvmFfi{}, {Backend::cpu, Backend::metal}),
      mac);
  EXPECT_EQ(tvm[0].name, "tvm-ffi01-cpu-aarch64-darwin");
  EXPECT_EQ(tvm[1].reason, "tvm-ffi kernels have no Metal build");

  mac.system.cpu = "riscv64";
  EXPECT_EQ(
      local_variants(config_with({Backend::cpu}, config::Torch{}, {Backend::cpu}), mac)[0].reason,
      "unsupported CPU \"riscv64\"");
}

}  // namespace
