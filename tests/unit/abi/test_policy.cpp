// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/abi/policy.hpp>

#include <gtest/gtest.h>

#include <kernelhub/abi/abi_data.hpp>

#include "abi_test_support.hpp"

namespace kernelhub::abi {
namespace {

using testing::embedded_data;


util::Expected<ResolvedPolicy> resolve(std::string_view name) {
  return resolve_policy(name, embedded_data().manylinux, embedded_data().kernel);
}

TEST(Policy, ResolvesNamesAndAliases) {
  EXPECT_EQ(resolve("manylinux_2_28")->manylinux->name, "manylinux_2_28");
  EXPECT_EQ(resolve("manylinux2014")->manylinux->name, "manylinux_2_17");
  EXPECT_EQ(resolve("manylinux1")->manylinux->name, "manylinux_2_5");
  EXPECT_EQ(resolve("manylinux_2_28")->dynamic_libstdcxx, DynamicLibstdcxx::allowed);
}

TEST(Policy, KernelPoliciesForTheTwoRequirementGenerations) {
  auto current = resolve("current");
  ASSERT_TRUE(current);
  EXPECT_EQ(current->manylinux->name, "manylinux_2_28");
  EXPECT_EQ(current->dynamic_libstdcxx, DynamicLibstdcxx::allowed);
  auto strict = resolve("strict");
  ASSERT_TRUE(strict);
  EXPECT_EQ(strict->name, "strict");
  EXPECT_EQ(strict->manylinux->name, "manylinux_2_27");
  EXPECT_EQ(strict->dynamic_libstdcxx, DynamicLibstdcxx::forbidden);
  EXPECT_EQ(embedded_data().kernel.default_name, "manylinux_2_28");
}

TEST(Policy, UnknownNameSuggestsTheClosest) {
  auto result = resolve("manylinux_2_28x");
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("unknown manylinux policy \"manylinux_2_28x\""),
            std::string::npos);
  EXPECT_NE(result.error().message.find("did you mean \"manylinux_2_28\"?"), std::string::npos);
}

TEST(Policy, ParseErrors) {
  EXPECT_FALSE(parse_manylinux_policies("{"));
  EXPECT_FALSE(parse_manylinux_policies(R"({"policies": [{"name": 1}]})"));
  auto bad = parse_kernel_policies(R"({"default": "x", "always_allowed_prefixes": [],
      "policies": [{"name": "p", "manylinux": "m", "dynamic_libstdcxx": "maybe"}]})");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("\"maybe\""), std::string::npos);
}

TEST(Policy, KernelPolicyNamingAnUnknownManylinuxPolicy) {
  auto kernel = parse_kernel_policies(R"({"default": "x", "always_allowed_prefixes": [],
      "policies": [{"name": "p", "manylinux": "manylinux_9_99",
                    "dynamic_libstdcxx": "allowed"}]})");
  ASSERT_TRUE(kernel);
  auto result = resolve_policy("p", embedded_data().manylinux, *kernel);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("manylinux_9_99"), std::string::npos);
}

}  // namespace
}  // namespace kernelhub::abi
