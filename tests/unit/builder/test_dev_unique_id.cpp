// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <kernelhub/builder/dev_unique_id.hpp>
#include <kernelhub/metadata/kernel_id.hpp>

namespace kernelhub::builder {
namespace {

namespace fs = std::filesystem;

TEST(DevUniqueId, AFolderKeepsItsIdFromBuildToBuild) {
  const auto kernel = fs::absolute("kernel");
  fs::create_directories(kernel);
  const auto first = dev_unique_id_for(kernel);
  ASSERT_TRUE(first.has_value()) << first.error().message;
  EXPECT_TRUE(metadata::is_dev_unique_id(*first)) << *first;
  EXPECT_TRUE(fs::is_regular_file(kernel / "build" / ".kernelhub" / "dev-id.json"));
  EXPECT_EQ(recorded_dev_unique_id(kernel), *first);
  // "kernel/." (a build of `.`) is the same folder.
  EXPECT_EQ(dev_unique_id_for(kernel / "."), *first);
  EXPECT_EQ(dev_unique_id_for(kernel / ""), *first);
}

TEST(DevUniqueId, ACopyOfTheFolderGetsAnIdOfItsOwn) {
  const auto kernel = fs::absolute("kernel");
  fs::create_directories(kernel);
  const auto original = dev_unique_id_for(kernel);
  ASSERT_TRUE(original.has_value());
  const auto copy = fs::absolute("copy");
  fs::copy(kernel, copy, fs::copy_options::recursive);
  EXPECT_EQ(recorded_dev_unique_id(copy), std::nullopt) << "the record names the original";
  const auto copied = dev_unique_id_for(copy);
  ASSERT_TRUE(copied.has_value());
  EXPECT_NE(*copied, *original);
  EXPECT_EQ(dev_unique_id_for(kernel), *original);
  EXPECT_EQ(dev_unique_id_for(copy), *copied);
}

TEST(DevUniqueId, ADamagedRecordIsReplaced) {
  const auto kernel = fs::absolute("kernel");
  fs::create_directories(kernel / "build" / ".kernelhub");
  for (const auto* text : {"not json", "{\"folder\": 1}", "[]"}) {
    std::ofstream(kernel / "build" / ".kernelhub" / "dev-id.json") << text;
    EXPECT_EQ(recorded_dev_unique_id(kernel), std::nullopt) << text;
    const auto made = dev_unique_id_for(kernel);
    ASSERT_TRUE(made.has_value()) << text;
    EXPECT_EQ(recorded_dev_unique_id(kernel), *made) << text;
  }
}

TEST(DevUniqueId, TheShapeIsDevAndTenBase32Characters) {
  EXPECT_EQ(metadata::dev_unique_id(0), "devaaaaaaaaaa");
  // Only the 6 low bytes, little-endian first: 0x01 -> "ae" ... as base32 of 01 00 00 00 00 00.
  EXPECT_EQ(metadata::dev_unique_id(1), "devaeaaaaaaaa");
  EXPECT_EQ(metadata::dev_unique_id(0xFFFF000000000001ULL), "devaeaaaaaaaa");
  EXPECT_TRUE(metadata::is_dev_unique_id("devaeaaaaaaaa"));
  EXPECT_FALSE(metadata::is_dev_unique_id("c2922cd"));
  EXPECT_FALSE(metadata::is_dev_unique_id("devaeaaaaaaa1"));
  EXPECT_FALSE(metadata::is_dev_unique_id("devaeaaaaaaa"));
}

}  // namespace
}  // namespace kernelhub::builder
