// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <kernelhub/variants/build_coverage.hpp>

namespace kernelhub::variants {
namespace {

using Names = std::vector<std::string>;

SystemVariants system_with(const std::string& system, const Names& names) {
  SystemVariants out;
  out.system = system;
  for (const auto& name : names) {
    out.variants.push_back(ProducedVariant{name, {}});
  }
  out.arch_variants = {"arch-names-are-not-variants"};
  return out;
}

TEST(BuildCoverage, ExpectedNamesAreUniqueInSystemOrderWithoutArchNames) {
  const std::vector<SystemVariants> systems = {
      system_with("aarch64-darwin", {"torch-metal", "torch-cpu"}),
      system_with("x86_64-linux", {"torch-cpu", "torch-cuda"}),
      system_with("aarch64-linux", {}),
  };
  EXPECT_EQ(expected_variant_names(systems), (Names{"torch-metal", "torch-cpu", "torch-cuda"}));
}

TEST(BuildCoverage, SplitsFoundFoldersIntoPresentMissingAndUnexpected) {
  const Names expected = {"torch215-cxx11-cpu-x86_64-linux", "torch215-cxx11-cu132-x86_64-linux",
                          "torch215-cpu-aarch64-darwin"};
  const auto coverage = compare_builds(
      expected, {"torch212-cxx11-cpu-x86_64-linux", "torch215-cxx11-cpu-x86_64-linux",
                 "torch215-cxx11-cpu-x86_64-linux", "a-stray-folder"});
  EXPECT_EQ(coverage.expected, expected);
  EXPECT_EQ(coverage.present, (Names{"torch215-cxx11-cpu-x86_64-linux"}));
  EXPECT_EQ(coverage.missing,
            (Names{"torch215-cxx11-cu132-x86_64-linux", "torch215-cpu-aarch64-darwin"}));
  EXPECT_EQ(coverage.unexpected, (Names{"a-stray-folder", "torch212-cxx11-cpu-x86_64-linux"}));
}

TEST(BuildCoverage, AnEmptyBuildMissesEverything) {
  const auto coverage = compare_builds({"torch-cpu", "torch-cuda"}, {});
  EXPECT_TRUE(coverage.present.empty());
  EXPECT_EQ(coverage.missing, (Names{"torch-cpu", "torch-cuda"}));
  EXPECT_TRUE(coverage.unexpected.empty());
}

}  // namespace
}  // namespace kernelhub::variants
