// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <kernelhub/builder/variant_selection.hpp>

namespace kernelhub::builder {
namespace {

MatrixPlan plan_of(const std::vector<std::string>& names) {
  MatrixPlan plan;
  std::size_t target = 0;
  for (const auto& name : names) {
    TargetedVariant targeted;
    targeted.variant.name = name;
    targeted.target = target++;
    plan.variants.push_back(targeted);
  }
  return plan;
}

std::vector<std::string> names_of(const MatrixPlan& plan) {
  std::vector<std::string> names;
  for (const auto& targeted : plan.variants) {
    names.push_back(targeted.variant.name);
  }
  return names;
}

const std::vector<std::string> k_buildable = {"torch214-cxx11-cpu-x86_64-linux",
                                              "torch215-cxx11-cpu-x86_64-linux", "torch-cuda"};

TEST(VariantSelection, NoNamesKeepsEveryVariant) {
  const auto selected = select_variants(plan_of(k_buildable), {});
  ASSERT_TRUE(selected.has_value());
  EXPECT_EQ(names_of(*selected), k_buildable);
}

TEST(VariantSelection, KeepsTheNamedVariantsInPlanOrderWithTheirTargets) {
  const auto selected =
      select_variants(plan_of(k_buildable), {"torch-cuda", "torch214-cxx11-cpu-x86_64-linux",
                                             "torch-cuda"});
  ASSERT_TRUE(selected.has_value());
  EXPECT_EQ(names_of(*selected),
            (std::vector<std::string>{"torch214-cxx11-cpu-x86_64-linux", "torch-cuda"}));
  EXPECT_EQ(selected->variants[0].target, 0u);
  EXPECT_EQ(selected->variants[1].target, 2u);
}

TEST(VariantSelection, AnUnknownNameSuggestsTheClosestAndListsTheBuildableOnes) {
  const auto selected = select_variants(plan_of(k_buildable), {"torch215-cxx11-cpu-x86_64-linx"});
  ASSERT_FALSE(selected.has_value());
  EXPECT_EQ(selected.error().message,
            "variant \"torch215-cxx11-cpu-x86_64-linx\" is not one this machine builds; did you "
            "mean \"torch215-cxx11-cpu-x86_64-linux\"? (buildable here: "
            "torch214-cxx11-cpu-x86_64-linux, torch215-cxx11-cpu-x86_64-linux, torch-cuda)");
}

TEST(VariantSelection, AnUnknownNameSaysWhichBackendsThisMachineLeavesOut) {
  auto plan = plan_of({"torch215-cxx11-cpu-x86_64-linux"});
  plan.skipped.push_back({types::Backend::cuda, "nvcc was not found in PATH", false});
  const auto selected = select_variants(plan, {"torch215-cxx11-cu132-x86_64-linux"});
  ASSERT_FALSE(selected.has_value());
  const auto& message = selected.error().message;
  EXPECT_NE(message.find("(buildable here: torch215-cxx11-cpu-x86_64-linux)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("; cuda is not built here: nvcc was not found in PATH"),
            std::string::npos)
      << message;
}

// Issue 22 §9: `--variant cpu` was refused, and a name far from every buildable one got no
// suggestion although the refusal promises the closest name.
TEST(VariantSelection, SkippingUnbuildableNamesKeepsTheBuildableOnesAndFailsOnlyOnNone) {
  const auto selected =
      select_variants(plan_of(k_buildable),
                      {"torch215-cxx11-cu132-x86_64-linux", "torch215-cxx11-cpu-x86_64-linux"},
                      UnbuildableVariants::skip);
  ASSERT_TRUE(selected.has_value()) << selected.error().message;
  EXPECT_EQ(names_of(*selected), std::vector<std::string>{"torch215-cxx11-cpu-x86_64-linux"});

  const auto none = select_variants(plan_of(k_buildable), {"torch215-cxx11-cu132-x86_64-linux"},
                                    UnbuildableVariants::skip);
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message.find("torch215-cxx11-cu132-x86_64-linux"), std::string::npos);
}

TEST(VariantSelection, AShortFormKeepsEveryVariantItMatches) {
  const auto selected = select_variants(plan_of(k_buildable), {"cpu"});
  ASSERT_TRUE(selected.has_value()) << selected.error().message;
  EXPECT_EQ(names_of(*selected), (std::vector<std::string>{"torch214-cxx11-cpu-x86_64-linux",
                                                           "torch215-cxx11-cpu-x86_64-linux"}));
}

TEST(VariantSelection, ShortFormsMatchPartsAndVersionedBackends) {
  const std::vector<std::string> built = {"torch211-cxx11-cpu-x86_64-linux",
                                          "torch211-cxx11-cu128-x86_64-linux",
                                          "torch212-cxx11-cu130-x86_64-linux", "torch-cuda"};
  EXPECT_EQ(match_variant_name("torch211-cpu", built),
            (std::vector<std::string>{"torch211-cxx11-cpu-x86_64-linux"}));
  EXPECT_EQ(match_variant_name("cu130", built),
            (std::vector<std::string>{"torch212-cxx11-cu130-x86_64-linux"}));
  EXPECT_EQ(match_variant_name("CUDA", built),
            (std::vector<std::string>{"torch211-cxx11-cu128-x86_64-linux",
                                      "torch212-cxx11-cu130-x86_64-linux", "torch-cuda"}));
  EXPECT_EQ(match_variant_name("torch-cuda", built), (std::vector<std::string>{"torch-cuda"}));
  EXPECT_TRUE(match_variant_name("metal", built).empty());
  EXPECT_TRUE(match_variant_name("cu", built).empty());
  EXPECT_TRUE(match_variant_name("-", built).empty());
}

TEST(VariantSelection, AFarNameStillGetsTheClosestBuildableName) {
  const auto selected = select_variants(plan_of({"torch-cpu", "torch-cuda"}),
                                        {"torch-cpu-x86_64-linux"});
  ASSERT_FALSE(selected.has_value());
  EXPECT_EQ(selected.error().message,
            "variant \"torch-cpu-x86_64-linux\" is not one this machine builds; did you mean "
            "\"torch-cpu\"? (buildable here: torch-cpu, torch-cuda)");
}

}  // namespace
}  // namespace kernelhub::builder
