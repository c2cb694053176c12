// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <string_view>

#include <kernelhub/builder/torch_versions.hpp>
#include <kernelhub/builder/tvm_ffi.hpp>
#include <kernelhub/config/build_config_reader.hpp>

#include "../config/reader_test_support.hpp"

namespace kernelhub::builder {
namespace {

using types::Backend;

using config::testing::parse_config;

variants::ReleaseVersion release(std::string_view text) {
  return variants::ReleaseVersion::parse(text).value();
}

TorchTarget target_at(std::string_view version) {
  TorchTarget target;
  target.python = std::string("/envs/") + std::string(version) + "/bin/python";
  TorchEnvironment torch;
  torch.torch_version = release(version);
  torch.cpu = "x86_64";
  torch.os = "linux";
  target.host.torch = torch;
  return target;
}

std::string kernel(std::string_view torch_table) {
  return std::string(R"([general]
name = "relu"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda"]

)") + std::string(torch_table) + R"(

[kernel.relu_cpu]
backend = "cpu"
depends = ["torch"]
src = ["relu_cpu/relu.cpp"]
)";
}

TEST(TorchVersions, ParsesTheTorchListKeepingOrderAndDroppingDuplicates) {
  const auto list = parse_torch_list(" 2.14, 2.15 ,2.14");
  ASSERT_TRUE(list.has_value()) << list.error().message;
  ASSERT_EQ(list->size(), 2U);
  EXPECT_EQ((*list)[0].to_string(), "2.14");
  EXPECT_EQ((*list)[1].to_string(), "2.15");
}

TEST(TorchVersions, RefusesEntriesThatAreNotMajorDotMinor) {
  for (const auto* text : {"", "2", "2.14.1", "2.x", "2.14,", "v2.14", "2..14"}) {
    const auto list = parse_torch_list(text);
    ASSERT_FALSE(list.has_value()) << text;
    EXPECT_NE(list.error().message.find("invalid torch version"), std::string::npos) << text;
  }
  EXPECT_EQ(parse_torch_list("2.14,2.1x").error().message,
            "invalid torch version \"2.1x\" in --torch; expected major.minor releases separated "
            "by commas, such as \"2.14,2.15\"");
}

TEST(TorchVersions, BoundsAreInclusiveAndCompareMajorMinor) {
  const auto config = parse_config(kernel("[torch]\nminver = \"2.14\"\nmaxver = \"2.15\""));
  const auto& torch = std::get<config::Torch>(config.framework);
  EXPECT_FALSE(torch_bounds_refusal(torch, release("2.14")).has_value());
  EXPECT_FALSE(torch_bounds_refusal(torch, release("2.15")).has_value());
  EXPECT_EQ(torch_bounds_refusal(torch, release("2.13")).value_or(""),
            "torch 2.13 is older than the kernel's torch.minver \"2.14\"; build with a torch "
            "from 2.14 on (--torch 2.14)");
  EXPECT_EQ(torch_bounds_refusal(torch, release("2.16")).value_or(""),
            "torch 2.16 is newer than the kernel's torch.maxver \"2.15\"; build with a torch up "
            "to 2.15 (--torch 2.15)");
  // The minor is compared as a number, not as text.
  EXPECT_TRUE(torch_bounds_refusal(torch, release("2.9")).has_value());
}

TEST(TorchVersions, PlanSkipsTheCpuVariantOutsideTheBounds) {
  HostTools host = target_at("2.15").host;
  const auto plan = plan_build(parse_config(kernel("[torch]\nmaxver = \"2.14\"")), host);
  ASSERT_EQ(plan.variants.size(), 1U);
  EXPECT_EQ(plan.variants[0].name, "torch-cuda");  // noarch: no torch involved
  ASSERT_FALSE(plan.skipped.empty());
  EXPECT_EQ(plan.skipped[0].backend, Backend::cpu);
  EXPECT_NE(plan.skipped[0].reason.find("newer than the kernel's torch.maxver \"2.14\""),
            std::string::npos);
}

TEST(TorchVersions, TorchBackendsWithoutKernelsAreNoarch) {
  // cuda has no [kernel.*]: torch-cuda, built without nvcc or torch.
  const auto plan = plan_build(parse_config(kernel("[torch]")), HostTools{});
  ASSERT_EQ(plan.variants.size(), 1U);
  EXPECT_EQ(plan.variants[0].name, "torch-cuda");
  EXPECT_EQ(plan.variants[0].kind, VariantKind::noarch);
  ASSERT_EQ(plan.skipped.size(), 1U);
  EXPECT_EQ(plan.skipped[0].backend, Backend::cpu);
}

TEST(TorchVersions, NeedsTorchOnlyWhenATorchBackendHasKernels) {
  EXPECT_TRUE(needs_torch(parse_config(kernel("[torch]"))));
  auto no_kernels = parse_config(kernel("[torch]"));
  no_kernels.kernels.clear();
  EXPECT_FALSE(needs_torch(no_kernels));
}

TEST(TorchVersions, MatrixBuildsArchPerTorchAndNoarchOnce) {
  const auto plan = plan_torch_matrix(parse_config(kernel("[torch]")),
                                      {target_at("2.14"), target_at("2.15")});
  ASSERT_EQ(plan.variants.size(), 3U);
  EXPECT_EQ(plan.variants[0].variant.name, "torch214-cxx11-cpu-x86_64-linux");
  EXPECT_EQ(plan.variants[0].target, 0U);
  EXPECT_EQ(plan.variants[1].variant.name, "torch-cuda");
  EXPECT_EQ(plan.variants[2].variant.name, "torch215-cxx11-cpu-x86_64-linux");
  EXPECT_EQ(plan.variants[2].target, 1U);
  EXPECT_TRUE(plan.skipped.empty());
}

TEST(TorchVersions, MatrixBuildsAStableAbiVariantOnceWithTheNewestTorch) {
  const auto config = parse_config(kernel("[torch]\nstable-abi = \"2.11\""));
  const auto plan = plan_torch_matrix(config, {target_at("2.15"), target_at("2.14")});
  ASSERT_EQ(plan.variants.size(), 2U);
  EXPECT_EQ(plan.variants[0].variant.name, "torch-stable-abi211-cpu-x86_64-linux");
  EXPECT_EQ(plan.variants[0].target, 0U);  // 2.15, the newer of the two
  const auto reversed = plan_torch_matrix(config, {target_at("2.14"), target_at("2.15")});
  EXPECT_EQ(reversed.variants[0].target, 1U);
}

TEST(TorchVersions, MatrixSaysWhichTorchASkipIsFor) {
  const auto plan = plan_torch_matrix(parse_config(kernel("[torch]\nminver = \"2.15\"")),
                                      {target_at("2.14"), target_at("2.15")});
  ASSERT_EQ(plan.variants.size(), 2U);  // torch-cuda, torch215
  ASSERT_EQ(plan.skipped.size(), 1U);
  EXPECT_EQ(plan.skipped[0].reason.rfind("with torch 2.14: torch 2.14 is older than", 0), 0U)
      << plan.skipped[0].reason;
}

TEST(TvmFfi, SkipReasonsArePrecise) {
  const auto plan = plan_build(parse_config(R"([general]
name = "relu"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu", "metal"]

[tvm-ffi]
src = ["tvm-ffi-ext/binding.cpp"]
)"),
                               HostTools{});
  EXPECT_TRUE(plan.variants.empty());
  ASSERT_EQ(plan.skipped.size(), 2U);
  EXPECT_NE(plan.skipped[0].reason.find("cannot import tvm_ffi"), std::string::npos);
  EXPECT_EQ(plan.skipped[1].reason,
            "tvm-ffi kernels build only for cpu, cuda and xpu (the reference's tvm-ffi CMake "
            "preamble has no metal path)");
}

}  // namespace
}  // namespace kernelhub::builder
