// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <kernelhub/builder/variant_metadata.hpp>

namespace kernelhub::builder {
namespace {

namespace fs = std::filesystem;

TEST(VariantMetadata, SourceDateEpochIsTheEnvironmentsElseTheCommits) {
  ::unsetenv("SOURCE_DATE_EPOCH");
  EXPECT_EQ(source_date_epoch(1772366400), 1772366400);
  EXPECT_EQ(source_date_epoch(std::nullopt), std::nullopt);
  ::setenv("SOURCE_DATE_EPOCH", "1000", 1);
  EXPECT_EQ(source_date_epoch(1772366400), 1000);
  ::setenv("SOURCE_DATE_EPOCH", "soon", 1);  // not a number: as if unset
  EXPECT_EQ(source_date_epoch(1772366400), 1772366400);
  ::unsetenv("SOURCE_DATE_EPOCH");
}

TEST(VariantMetadata, EveryCommandGetsSourceDateEpoch) {
  std::vector<Command> commands{Command{{"cmake"}, {}}, Command{{"ninja"}, {}}};
  set_source_date_epoch(commands, BuildSource{std::nullopt, std::nullopt});
  EXPECT_TRUE(commands[0].env.empty());
  set_source_date_epoch(commands, BuildSource{std::nullopt, 42});
  for (const auto& command : commands) {
    ASSERT_EQ(command.env.size(), 1U);
    EXPECT_EQ(command.env[0], (std::pair<std::string, std::string>{"SOURCE_DATE_EPOCH", "42"}));
  }
}

TEST(VariantMetadata, BuildProvenanceReadsTheToolchainRecord) {
  // What compat/reproducible.cmake writes into the build tree.
  fs::create_directories("tree");
  std::ofstream("tree/kernelhub-toolchain.json")
      << R"({"cmake":"3.25.1","build-type":"Release",)"
      << R"("cxx":{"id":"GNU","version":"12.2.0","flags":"-O3 -DNDEBUG"},)"
      << R"("cuda":{"id":"NVIDIA","version":"13.0.88","flags":"--expt-relaxed-constexpr"}})";
  const BuildSource source{"https://hub.example/k/relu.git", 1772366400};
  const auto build = build_provenance(source, fs::path("tree"), {{"torch", "2.15.0+cu132"}});
  EXPECT_EQ(build.origin, source.origin);
  EXPECT_EQ(build.source_date_epoch, 1772366400);
  EXPECT_EQ(build.toolchain, (std::map<std::string, std::string>{{"cmake", "3.25.1"},
                                                                  {"cuda", "NVIDIA 13.0.88"},
                                                                  {"cxx", "GNU 12.2.0"},
                                                                  {"torch", "2.15.0+cu132"}}));
  EXPECT_EQ(build.flags, (std::map<std::string, std::string>{{"build-type", "Release"},
                                                              {"cuda", "--expt-relaxed-constexpr"},
                                                              {"cxx", "-O3 -DNDEBUG"}}));

  // No record (a noarch variant, or a project that did not write one): the source alone.
  const auto bare = build_provenance(source, fs::path("missing"), {});
  EXPECT_TRUE(bare.toolchain.empty());
  EXPECT_TRUE(bare.flags.empty());
  EXPECT_EQ(bare.origin, source.origin);
}

}  // namespace
}  // namespace kernelhub::builder
