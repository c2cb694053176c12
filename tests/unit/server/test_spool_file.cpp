// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <kernelhub/server/spool_file.hpp>

namespace fs = std::filesystem;
using kernelhub::server::SpoolFile;

TEST(SpoolFile, MapsWhatWasWrittenAndUnlinksOnReset) {
  SpoolFile spool;
  ASSERT_TRUE(spool.create("spool"));
  const fs::path path = spool.path();
  EXPECT_EQ(path.parent_path(), fs::path("spool"));
  const std::string body(3 * 4096 + 17, 'x');
  std::ofstream(path, std::ios::binary) << body;
  ASSERT_TRUE(spool.map());
  EXPECT_EQ(spool.view(), body);
  // Dropped pages read back from the file.
  spool.drop_pages(spool.view());
  EXPECT_EQ(spool.view(), body);
  spool.reset();
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(spool.view().empty());
}

TEST(SpoolFile, AnEmptyBodyMapsToAnEmptyView) {
  SpoolFile spool;
  ASSERT_TRUE(spool.create("."));
  ASSERT_TRUE(spool.map());
  EXPECT_TRUE(spool.view().empty());
}

TEST(SpoolFile, RemakesItsFolderAndUnlinksWhenDropped) {
  fs::path path;
  {
    SpoolFile spool;
    ASSERT_TRUE(spool.create("gone/spool"));
    path = spool.path();
    EXPECT_TRUE(fs::exists(path));
  }
  EXPECT_FALSE(fs::exists(path));
}
