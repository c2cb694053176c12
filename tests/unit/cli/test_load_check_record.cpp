// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <kernelhub/cli/commands/load_check_record.hpp>

namespace kernelhub::cli::commands {
namespace {

namespace fs = std::filesystem;

fs::path make_variant(const std::string& name, const std::string& metadata) {
  const fs::path variant = fs::path("build") / name;
  fs::create_directories(variant);
  std::ofstream(variant / "metadata.json") << metadata;
  return variant;
}

TEST(LoadCheckRecord, IsKeptBesideTheVariantAndTiedToItsMetadata) {
  const auto variant = make_variant("torch-cpu", R"({"digest": "a"})");
  EXPECT_EQ(load_check_folder(variant), fs::path("build/.kernelhub/torch-cpu"));
  EXPECT_EQ(current_load_check_record(variant), std::nullopt);
  write_load_check_record(variant, {LoadCheckOutcome::passed, "key", metadata_sha256(variant), ""});
  const auto record = current_load_check_record(variant);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->outcome, LoadCheckOutcome::passed);
  EXPECT_EQ(record->key, "key");
  // Other files (a new digest in metadata.json): the record is about something else.
  std::ofstream(variant / "metadata.json") << R"({"digest": "b"})";
  EXPECT_EQ(current_load_check_record(variant), std::nullopt);
  EXPECT_TRUE(read_load_check_record(variant));
  forget_load_check(variant);
  EXPECT_EQ(read_load_check_record(variant), std::nullopt);
}

TEST(LoadCheckRecord, AFailedVariantIsSetAsideOutOfBuild) {
  const auto variant = make_variant("torch-cuda", "{}");
  write_load_check_record(variant, {LoadCheckOutcome::failed, "", metadata_sha256(variant),
                                    "RuntimeError: boom"});
  const auto aside = set_aside_failed_variant(variant);
  ASSERT_TRUE(aside);
  EXPECT_EQ(*aside, fs::path("build/.kernelhub/torch-cuda/failed"));
  EXPECT_FALSE(fs::exists(variant));
  EXPECT_TRUE(fs::exists(*aside / "metadata.json"));
  const auto found = set_aside_variants("build");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].name, "torch-cuda");
  EXPECT_EQ(found[0].message, "RuntimeError: boom");
  // A new build of the variant: forgetting its check removes what was set aside.
  make_variant("torch-cuda", "{}");
  forget_load_check(variant);
  EXPECT_TRUE(set_aside_variants("build").empty());
}

}  // namespace
}  // namespace kernelhub::cli::commands
