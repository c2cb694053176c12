// SPDX-License-Identifier: Apache-2.0
#include <filesystem>

#include <sys/stat.h>

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

// The umask is read from /proc without being changed: a file another thread creates meanwhile
// gets the process's real mask (umask(0) for an instant would give it mode 0666).
TEST(FileIo, UmaskIsReadWithoutChangingIt) {
  const mode_t saved = ::umask(027);
  EXPECT_EQ(current_umask(), static_cast<mode_t>(027));
  ASSERT_TRUE(write_file_atomic("masked.txt", "x"));
  EXPECT_EQ(fs::status("masked.txt").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_EQ(::umask(saved), static_cast<mode_t>(027));
}
