// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <string_view>

#include <kernelhub/builder/build_plan.hpp>
#include <kernelhub/builder/stable_abi.hpp>
#include <kernelhub/codegen/create_project.hpp>
#include <kernelhub/config/build_config_reader.hpp>

#include "../config/reader_test_support.hpp"

namespace kernelhub::builder {
namespace {

using types::Backend;

using config::testing::parse_config;

TorchEnvironment torch_at(std::string_view version, std::string os = "linux") {
  TorchEnvironment torch;
  torch.torch_version = variants::ReleaseVersion::parse(version).value();
  torch.cpu = "x86_64";
  torch.os = std::move(os);
  return torch;
}

types::Version version(std::string_view text) { return types::Version::parse(text).value(); }

// [torch.stable-abi] names cpu only; metal has no kernel of its own, as in the reference's
// relu-torch-stable-abi example.
constexpr std::string_view k_stable_cpu = R"([general]
name = "relu-stable-abi"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu", "metal"]

[torch]
src = ["torch-ext/torch_binding.cpp"]

[torch.stable-abi]
cpu = "2.11"
cuda = "2.12"

[kernel.relu_cpu]
backend = "cpu"
depends = ["torch"]
src = ["relu_cpu/relu.cpp"]
)";

TEST(StableAbi, TargetVersionIsMajorAndMinorInTheTopBytes) {
  EXPECT_EQ(codegen::torch_target_version(version("2.11")), "0x020b000000000000");
  EXPECT_EQ(codegen::torch_target_version(version("2.9")), "0x0209000000000000");
  // The patch does not count: the stable ABI is versioned by release.
  EXPECT_EQ(codegen::torch_target_version(version("2.10.3")), "0x020a000000000000");
  EXPECT_EQ(codegen::torch_target_version(version("3")), "0x0300000000000000");
}

TEST(StableAbi, VariantNamesHaveNoCxx11EvenOnLinux) {
  EXPECT_EQ(stable_abi_variant_name(version("2.11"), torch_at("2.15"), Backend::cpu),
            "torch-stable-abi211-cpu-x86_64-linux");
  auto mac = torch_at("2.15", "darwin");
  mac.cpu = "aarch64";
  EXPECT_EQ(stable_abi_variant_name(version("2.9"), mac, Backend::cpu),
            "torch-stable-abi29-cpu-aarch64-darwin");
}

TEST(StableAbi, AnOlderTorchIsRefusedNamingBothVersions) {
  EXPECT_FALSE(stable_abi_refusal(torch_at("2.11").torch_version, version("2.11")).has_value());
  EXPECT_FALSE(stable_abi_refusal(torch_at("2.15").torch_version, version("2.11")).has_value());
  EXPECT_EQ(stable_abi_refusal(torch_at("2.10").torch_version, version("2.11")).value_or(""),
            "torch 2.10 is older than the stable ABI version \"2.11\" it would target; build "
            "with torch 2.11 or newer (--torch 2.11)");
}

TEST(StableAbi, ConfigGivesTheVersionOfEachBackend) {
  const auto config = parse_config(k_stable_cpu);
  EXPECT_EQ(config.stable_abi_for(Backend::cpu), version("2.11"));
  EXPECT_EQ(config.stable_abi_for(Backend::cuda), version("2.12"));
  EXPECT_FALSE(config.stable_abi_for(Backend::metal).has_value());
  auto all = config;
  std::get<config::Torch>(all.framework).stable_abi = version("2.10");
  EXPECT_EQ(all.stable_abi_for(Backend::metal), version("2.10"));
}

TEST(StableAbi, PlanBuildsTheStableVariantAndMetalAsNoarch) {
  HostTools host;
  host.torch = torch_at("2.15");
  const auto plan = plan_build(parse_config(k_stable_cpu), host);
  ASSERT_EQ(plan.variants.size(), 2U);
  EXPECT_EQ(plan.variants[0].name, "torch-stable-abi211-cpu-x86_64-linux");
  EXPECT_EQ(plan.variants[0].kind, VariantKind::arch);
  EXPECT_EQ(plan.variants[0].stable_abi, version("2.11"));
  EXPECT_EQ(plan.variants[1].name, "torch-metal");
  EXPECT_EQ(plan.variants[1].kind, VariantKind::noarch);
  EXPECT_TRUE(plan.skipped.empty());
}

TEST(StableAbi, PlanSkipsTheStableVariantUnderAnOlderTorch) {
  HostTools host;
  host.torch = torch_at("2.10");
  const auto plan = plan_build(parse_config(k_stable_cpu), host);
  ASSERT_EQ(plan.variants.size(), 1U);
  EXPECT_EQ(plan.variants[0].name, "torch-metal");
  ASSERT_EQ(plan.skipped.size(), 1U);
  EXPECT_EQ(plan.skipped[0].backend, Backend::cpu);
  EXPECT_NE(plan.skipped[0].reason.find("older than the stable ABI version \"2.11\""),
            std::string::npos);
}

TEST(StableAbi, ProjectDefinesTorchTargetVersionOnlyForStableBackends) {
  const auto config = parse_config(k_stable_cpu);
  const auto project = codegen::create_project(config, "/k", "abc1234", Backend::cpu);
  ASSERT_TRUE(project.has_value()) << project.error().message;
  const auto* cmake = project->find("CMakeLists.txt");
  ASSERT_NE(cmake, nullptr);
  EXPECT_NE(cmake->content.find("TORCH_TARGET_VERSION=0x020b000000000000"), std::string::npos);

  auto plain = config;
  std::get<config::Torch>(plain.framework).stable_abi.reset();
  const auto arch = codegen::create_project(plain, "/k", "abc1234", Backend::cpu);
  ASSERT_TRUE(arch.has_value()) << arch.error().message;
  EXPECT_EQ(arch->find("CMakeLists.txt")->content.find("TORCH_TARGET_VERSION"), std::string::npos);
}

TEST(StableAbi, ANoarchBackendOfATorchKernelGetsTheNoarchOps) {
  const auto project =
      codegen::create_project(parse_config(k_stable_cpu), "/k", "abc1234", Backend::metal);
  ASSERT_TRUE(project.has_value()) << project.error().message;
  EXPECT_EQ(project->find("CMakeLists.txt"), nullptr);
  const auto* ops = project->find("torch-ext/relu_stable_abi/_ops.py");
  ASSERT_NE(ops, nullptr);
  EXPECT_NE(ops->content.find("get_backend"), std::string::npos);
}

}  // namespace
}  // namespace kernelhub::builder
