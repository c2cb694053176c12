// SPDX-License-Identifier: Apache-2.0
#include <filesystem>

#include <gtest/gtest.h>

#include <kernelhub/util/file_io.hpp>

using namespace kernelhub::util;
namespace fs = std::filesystem;

TEST(FileIo, AtomicWriteReplacesContentAndLeavesNoTemporaries) {
  ASSERT_TRUE(write_file_atomic("out.txt", "first"));
  ASSERT_TRUE(write_file_atomic("out.txt", "second"));
  EXPECT_EQ(read_file("out.txt").value(), "second");
  int entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(".")) {
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST(FileIo, ErrorsNameThePath) {
  auto missing = read_file("does-not-exist.toml");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("does-not-exist.toml"), std::string::npos);
  auto unwritable = write_file_atomic("no-such-dir/x.txt", "data");
  ASSERT_FALSE(unwritable);
  EXPECT_NE(unwritable.error().message.find("no-such-dir/x.txt"), std::string::npos);
}
