// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include <kernelhub/builder/build_plan.hpp>
#include <kernelhub/builder/cuda_plan.hpp>
#include <kernelhub/config/build_config_reader.hpp>

#include "../config/reader_test_support.hpp"

namespace kernelhub::builder {
namespace {

using config::testing::parse_config;

TorchEnvironment cuda_torch(std::optional<std::string> cuda = "13.2") {
  TorchEnvironment torch;
  torch.torch_version = variants::ReleaseVersion::parse("2.15").value();
  torch.cuda = std::move(cuda);
  torch.cpu = "x86_64";
  torch.os = "linux";
  return torch;
}

CudaToolkit nvcc(std::vector<std::uint64_t> version = {13, 0}) {
  CudaToolkit toolkit;
  toolkit.nvcc = "/usr/local/cuda/bin/nvcc";
  toolkit.version = types::Version(std::move(version));
  for (const auto* arch : {"7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "11.0", "12.0", "12.1"}) {
    toolkit.supported.push_back(parse_cuda_arch(arch).value());
  }
  return toolkit;
}

std::string relu_config(std::string_view general_extra = "", std::string_view kernel_extra = "") {
  return fmt::format(R"([general]
name = "relu"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda"]
{}
[torch]
src = ["torch-ext/torch_binding.cpp"]

[kernel.relu_cpu]
backend = "cpu"
depends = ["torch"]
src = ["relu_cpu/relu.cpp"]

[kernel.relu_cuda]
backend = "cuda"
depends = ["torch"]
src = ["relu_cuda/relu.cu"]
{}
)",
                     general_extra, kernel_extra);
}

TEST(CudaPlan, SkipReasonsNameWhatToInstall) {
  const auto config = parse_config(relu_config());
  const auto no_nvcc = cuda_skip_reason(config, cuda_torch(), std::nullopt);
  ASSERT_TRUE(no_nvcc.has_value());
  EXPECT_EQ(*no_nvcc,
            "nvcc was not found in PATH, $CUDA_HOME/bin or /usr/local/cuda/bin; install the CUDA "
            "toolkit (or set CUDA_HOME to it) to build cuda kernels");
  EXPECT_EQ(cuda_skip_reason(config, std::nullopt, nvcc()).value(),
            "no Python with torch was found; pass --python");
  const auto cpu_torch = cuda_skip_reason(config, cuda_torch(std::nullopt), nvcc());
  ASSERT_TRUE(cpu_torch.has_value());
  EXPECT_NE(cpu_torch->find("not a CUDA build (torch.version.cuda is None)"), std::string::npos);
  EXPECT_NE(cpu_torch->find("https://download.pytorch.org/whl/cu130"), std::string::npos);
  EXPECT_FALSE(cuda_skip_reason(config, cuda_torch(), nvcc()).has_value());
}

TEST(CudaPlan, MajorMismatchSkipsMinorMismatchWarns) {
  const auto config = parse_config(relu_config());
  EXPECT_EQ(cuda_skip_reason(config, cuda_torch("13.2"), nvcc({12, 8})).value(),
            "nvcc is CUDA 12.8 but torch was built with CUDA 13.2; install a CUDA 13 toolkit (or "
            "set CUDA_HOME to one) or a torch built for CUDA 12 (torch.utils.cpp_extension "
            "refuses a different major version too)");
  const auto build = plan_cuda_build(config, cuda_torch("13.2"), nvcc({13, 0})).value();
  ASSERT_EQ(build.warnings.size(), 1U);
  EXPECT_EQ(build.warnings[0],
            "nvcc is CUDA 13.0 but torch was built with CUDA 13.2; building anyway, as "
            "torch.utils.cpp_extension does when only the minor version differs");
}

TEST(CudaPlan, GeneralCudaBoundsAreHonoured) {
  const auto too_old = parse_config(relu_config("\n[general.cuda]\nminver = \"13.5\"\n"));
  EXPECT_EQ(cuda_skip_reason(too_old, cuda_torch("13.2"), nvcc()).value(),
            "torch is CUDA 13.2, older than general.cuda.minver \"13.5\"");
  const auto too_new = parse_config(relu_config("\n[general.cuda]\nmaxver = \"12.9\"\n"));
  EXPECT_EQ(cuda_skip_reason(too_new, cuda_torch("13.2"), nvcc()).value(),
            "torch is CUDA 13.2, newer than general.cuda.maxver \"12.9\"");
  // torch's CUDA passes; the toolkit's is checked as well, as the reference's CMake does.
  const auto toolkit_old = parse_config(relu_config("\n[general.cuda]\nminver = \"13.1\"\n"));
  EXPECT_EQ(cuda_skip_reason(toolkit_old, cuda_torch("13.2"), nvcc({13, 0})).value(),
            "nvcc is CUDA 13.0, older than general.cuda.minver \"13.1\"");
}

TEST(CudaPlan, KernelArchsAreIntersectedAndFlagged) {
  const auto config =
      parse_config(relu_config("", "cuda-capabilities = [\"7.0\", \"8.0\", \"9.0+PTX\"]\n"
                                   "cuda-flags = [\"-lineinfo\"]\n"));
  const auto build = plan_cuda_build(config, cuda_torch("13.0"), nvcc()).value();
  ASSERT_EQ(build.kernels.size(), 1U);
  EXPECT_EQ(build.kernels[0].kernel, "relu_cuda");
  EXPECT_EQ(to_strings(build.kernels[0].archs), (std::vector<std::string>{"8.0", "9.0+PTX"}));
  EXPECT_EQ(build.kernels[0].nvcc_flags,
            (std::vector<std::string>{"-gencode=arch=compute_80,code=sm_80",
                                      "-gencode=arch=compute_90,code=sm_90",
                                      "-gencode=arch=compute_90,code=compute_90", "-lineinfo"}));
  EXPECT_EQ(build.archs, (std::vector<std::string>{"8.0", "9.0+PTX"}));
  // The loose intersection keeps 7.0 for target 7.5 (same major), as the reference's CMake
  // does, but CUDA 13's nvcc has no sm_70 any more: dropped, and said so.
  ASSERT_EQ(build.warnings.size(), 1U);
  EXPECT_EQ(build.warnings[0],
            "cuda kernel \"relu_cuda\": nvcc (CUDA 13.0) cannot compile for 7.0; left out (see "
            "`nvcc --list-gpu-arch`)");
}

TEST(CudaPlan, KernelWithoutCapabilitiesGetsTheDefaults) {
  const auto build = plan_cuda_build(parse_config(relu_config()), cuda_torch("13.0"), nvcc()).value();
  EXPECT_EQ(build.archs, (std::vector<std::string>{"7.5", "8.0", "8.6", "8.7", "8.9", "9.0",
                                                   "10.0", "11.0", "12.0", "12.1+PTX"}));
}

TEST(CudaPlan, ArchsNvccCannotCompileAreDroppedWithAWarning) {
  auto toolkit = nvcc();
  std::erase(toolkit.supported, parse_cuda_arch("7.5").value());
  const auto build = plan_cuda_build(parse_config(relu_config()), cuda_torch("13.0"), toolkit).value();
  EXPECT_EQ(build.archs.front(), "8.0");
  ASSERT_EQ(build.warnings.size(), 1U);
  EXPECT_EQ(build.warnings[0],
            "cuda kernel \"relu_cuda\": nvcc (CUDA 13.0) cannot compile for 7.5; left out (see "
            "`nvcc --list-gpu-arch`)");
}

TEST(CudaPlan, EmptyIntersectionFailsLikeTheReference) {
  const auto config = parse_config(relu_config("", "cuda-capabilities = [\"99999.0\"]\n"));
  const auto build = plan_cuda_build(config, cuda_torch("13.0"), nvcc());
  ASSERT_FALSE(build.has_value());
  EXPECT_EQ(build.error().message,
            "cuda kernel \"relu_cuda\": empty set of capabilities after intersection (kernel: "
            "99999.0, supported: 7.5, 8.0, 8.6, 8.7, 8.9, 9.0, 10.0, 11.0, 12.0, 12.1)");
  const auto bad = parse_config(relu_config("", "cuda-capabilities = [\"sm_90\"]\n"));
  const auto invalid = plan_cuda_build(bad, cuda_torch("13.0"), nvcc());
  ASSERT_FALSE(invalid.has_value());
  EXPECT_EQ(invalid.error().message.rfind("kernel.relu_cuda.cuda-capabilities: invalid cuda "
                                          "capability \"sm_90\"",
                                          0),
            0U);
}

TEST(CudaPlan, CudaMinverLeavesTheKernelOutAndSaysSo) {
  const auto config = parse_config(relu_config("", "cuda-minver = \"13.1\"\n"));
  const auto build = plan_cuda_build(config, cuda_torch("13.0"), nvcc()).value();
  EXPECT_TRUE(build.kernels.empty());
  EXPECT_TRUE(build.archs.empty());
  ASSERT_EQ(build.warnings.size(), 1U);
  EXPECT_EQ(build.warnings[0],
            "cuda kernel \"relu_cuda\" needs CUDA 13.1 (cuda-minver) and nvcc is CUDA 13.0; left "
            "out of the cuda variant");
}

TEST(CudaPlan, BuildPlanNamesTheVariantAfterTorchsCuda) {
  HostTools host;
  host.torch = cuda_torch("13.2");
  host.cuda_toolkit = nvcc({13, 2});
  host.nvcc = true;
  const auto plan = plan_build(parse_config(relu_config()), host);
  ASSERT_EQ(plan.variants.size(), 2U);
  EXPECT_EQ(plan.variants[0].name, "torch215-cxx11-cpu-x86_64-linux");
  EXPECT_FALSE(plan.variants[0].cuda.has_value());
  EXPECT_EQ(plan.variants[1].name, "torch215-cxx11-cu132-x86_64-linux");
  ASSERT_TRUE(plan.variants[1].cuda.has_value());
  EXPECT_EQ(plan.variants[1].cuda->kernels.size(), 1U);
  EXPECT_TRUE(plan.skipped.empty());
}

TEST(CudaPlan, BuildPlanMarksAnEmptyCapabilitySetAsAnError) {
  HostTools host;
  host.torch = cuda_torch("13.0");
  host.cuda_toolkit = nvcc();
  const auto plan =
      plan_build(parse_config(relu_config("", "cuda-capabilities = [\"5.0\"]\n")), host);
  ASSERT_EQ(plan.skipped.size(), 1U);
  EXPECT_EQ(plan.skipped[0].backend, types::Backend::cuda);
  EXPECT_TRUE(plan.skipped[0].is_error);
  EXPECT_NE(plan.skipped[0].reason.find("empty set of capabilities"), std::string::npos);
}

}  // namespace
}  // namespace kernelhub::builder
