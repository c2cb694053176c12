// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <kernelhub/cli/command_support.hpp>

namespace kernelhub::cli {
namespace {

RevisionOptions parse(std::vector<std::string> args) {
  CLI::App app("test", "test");
  RevisionOptions options;
  add_revision_options(app, options);
  std::reverse(args.begin(), args.end());  // CLI11 parses a vector from its back
  app.parse(args);
  options.collect();
  return options;
}

TEST(RevisionOptions, NeitherGivenLeavesBothUnset) {
  const auto options = parse({});
  EXPECT_FALSE(options.given());
  EXPECT_FALSE(options.version.has_value());
  EXPECT_FALSE(options.revision.has_value());
}

TEST(RevisionOptions, VersionZeroIsStillGiven) {
  const auto options = parse({"--version", "0"});
  ASSERT_TRUE(options.version.has_value());
  EXPECT_EQ(*options.version, 0u);
  EXPECT_FALSE(options.revision.has_value());
}

TEST(RevisionOptions, RevisionIsKeptAsWritten) {
  const auto options = parse({"--revision", "refs/pr/1"});
  EXPECT_EQ(options.revision, std::optional<std::string>("refs/pr/1"));
  EXPECT_TRUE(options.given());
}

TEST(RevisionOptions, VersionAndRevisionExcludeEachOther) {
  EXPECT_THROW(parse({"--version", "1", "--revision", "main"}), CLI::ExcludesError);
}

TEST(RevisionOptions, DefaultHelpIsTheVerifyCommandsWording) {
  CLI::App app("test", "test");
  RevisionOptions options;
  add_revision_options(app, options);
  EXPECT_EQ(options.version_option->get_description(), k_version_help);
  EXPECT_EQ(options.revision_option->get_description(), k_revision_help);
}

TEST(FinishVerdict, AddsOkAndSetsTheExitStatusOnlyOnFailure) {
  RunState state;
  nlohmann::ordered_json out = {{"variants", nlohmann::ordered_json::array()}};
  finish_verdict(out, /*failed=*/false, /*json=*/false, state);
  EXPECT_EQ(out["ok"], true);
  EXPECT_EQ(state.exit_code, 0);
  finish_verdict(out, /*failed=*/true, /*json=*/false, state);
  EXPECT_EQ(out["ok"], false);
  EXPECT_EQ(state.exit_code, 1);
  EXPECT_EQ(out.begin().key(), "variants");  // "ok" comes last, as the commands printed it
}

}  // namespace
}  // namespace kernelhub::cli
