// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <string_view>

#include <kernelhub/builder/build_plan.hpp>
#include <kernelhub/config/build_config_reader.hpp>

#include "../config/reader_test_support.hpp"

namespace kernelhub::builder {
namespace {

using types::Backend;

using config::testing::parse_config;

TorchEnvironment torch_215(std::string os = "linux") {
  TorchEnvironment torch;
  torch.torch_version = variants::ReleaseVersion::parse("2.15").value();
  torch.cpu = "x86_64";
  torch.os = std::move(os);
  return torch;
}

constexpr std::string_view k_all_backends = R"([general]
name = "relu"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda", "metal", "rocm", "xpu"]

[torch]
src = ["torch-ext/torch_binding.cpp"]

[kernel.relu_cpu]
backend = "cpu"
depends = ["torch"]
src = ["relu_cpu/relu.cpp"]

# Every backend has a kernel of its own: a backend without one is built as noarch.
[kernel.relu_cuda]
backend = "cuda"
depends = ["torch"]
src = ["relu_cuda/relu.cu"]

[kernel.relu_metal]
backend = "metal"
depends = ["torch"]
src = ["relu_metal/relu.mm"]

[kernel.relu_rocm]
backend = "rocm"
depends = ["torch"]
src = ["relu_rocm/relu.hip"]

[kernel.relu_xpu]
backend = "xpu"
depends = ["torch"]
src = ["relu_xpu/relu.cpp"]
)";

TEST(BuildPlan, ArchVariantNamesFollowTheActiveTorch) {
  EXPECT_EQ(torch_arch_variant_name(torch_215(), Backend::cpu), "torch215-cxx11-cpu-x86_64-linux");
  auto mac = torch_215("darwin");
  mac.cpu = "aarch64";
  EXPECT_EQ(torch_arch_variant_name(mac, Backend::cpu), "torch215-cpu-aarch64-darwin");
}

TEST(BuildPlan, BuildsCpuAndSaysWhyTheOthersAreSkipped) {
  HostTools host;
  host.torch = torch_215();
  const auto plan = plan_build(parse_config(k_all_backends), host);
  ASSERT_EQ(plan.variants.size(), 1U);
  EXPECT_EQ(plan.variants[0].name, "torch215-cxx11-cpu-x86_64-linux");
  EXPECT_EQ(plan.variants[0].kind, VariantKind::arch);
  ASSERT_EQ(plan.skipped.size(), 4U);
  EXPECT_EQ(plan.skipped[0].backend, Backend::cuda);
  EXPECT_EQ(plan.skipped[0].reason,
            "nvcc was not found in PATH, $CUDA_HOME/bin or /usr/local/cuda/bin; install the CUDA "
            "toolkit (or set CUDA_HOME to it) to build cuda kernels");
  EXPECT_EQ(plan.skipped[1].reason, "metal kernels build only on macOS, this machine runs linux");
  EXPECT_EQ(plan.skipped[2].reason,
            "hipcc was not found in PATH; install ROCm to build rocm kernels");
  EXPECT_EQ(plan.skipped[3].reason,
            "icpx was not found in PATH; install the oneAPI DPC++ compiler to build xpu kernels");
}

TEST(BuildPlan, MetalOnMacOSIsNotImplementedYet) {
  HostTools host;
  host.os = "darwin";
  const auto plan = plan_build(parse_config(k_all_backends), host);
  ASSERT_EQ(plan.skipped.size(), 5U);
  EXPECT_EQ(plan.skipped[2].backend, Backend::metal);
  EXPECT_EQ(plan.skipped[2].reason, "metal builds are not implemented by kernel-builder build yet");
}

TEST(BuildPlan, CudaWithNvccButACpuTorchSaysWhichTorchToInstall) {
  HostTools host;
  host.torch = torch_215();  // torch.version.cuda is None
  host.nvcc = true;
  host.cuda_toolkit = CudaToolkit{"/usr/local/cuda/bin/nvcc", types::Version({13, 0}), {}};
  const auto plan = plan_build(parse_config(k_all_backends), host);
  ASSERT_FALSE(plan.skipped.empty());
  EXPECT_EQ(plan.skipped[0].backend, Backend::cuda);
  EXPECT_NE(plan.skipped[0].reason.find("is not a CUDA build"), std::string::npos);
}

TEST(BuildPlan, CpuWithoutTorchIsSkippedWithAHint) {
  const auto plan = plan_build(parse_config(k_all_backends), HostTools{});
  EXPECT_TRUE(plan.variants.empty());
  EXPECT_EQ(plan.skipped[0].backend, Backend::cpu);
  EXPECT_EQ(plan.skipped[0].reason, "no Python with torch was found; pass --python");
}

TEST(BuildPlan, NoarchBuildsEveryBackendWithoutTorch) {
  const auto plan = plan_build(parse_config(R"([general]
name = "silu"
version = 1
edition = 5
license = "MIT"
backends = ["cuda", "cpu"]

[torch-noarch]
)"),
                               HostTools{});
  ASSERT_EQ(plan.variants.size(), 2U);
  EXPECT_EQ(plan.variants[0].name, "torch-cuda");
  EXPECT_EQ(plan.variants[1].name, "torch-cpu");
  EXPECT_EQ(plan.variants[1].kind, VariantKind::noarch);
  EXPECT_TRUE(plan.skipped.empty());
}

}  // namespace
}  // namespace kernelhub::builder
