// SPDX-License-Identifier: Apache-2.0
// read_file refuses what is not a regular file before reading a byte (issue 12, item 13): a
// FIFO would block for ever, /dev/zero would never end.
#include <kernelhub/util/file_io.hpp>

#include <filesystem>

#include <gtest/gtest.h>

#include "fifo_guard.hpp"

namespace kernelhub::util {
namespace {

namespace fs = std::filesystem;

TEST(SpecialFiles, ReadFileRefusesAFifoWithoutBlocking) {
  const auto fifo = kernelhub::testing::make_fifo("special.fifo");
  bool blocked = false;
  const auto text = kernelhub::testing::call_with_fifo_unblocker(
      fifo, [&] { return read_file(fifo); }, blocked);
  EXPECT_FALSE(blocked) << "read_file waited for a writer";
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find("FIFO"), std::string::npos) << text.error().message;
  EXPECT_NE(text.error().message.find("special.fifo"), std::string::npos);
}

TEST(SpecialFiles, ReadFileRefusesALinkToADevice) {
  // /dev/null rather than /dev/zero: a regression then returns "" instead of never ending.
  fs::remove("null.toml");
  fs::create_symlink("/dev/null", "null.toml");
  const auto text = read_file("null.toml");
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find("character device"), std::string::npos)
      << text.error().message;
}

TEST(SpecialFiles, ReadFileStillReadsRegularFilesAndLinksToThem) {
  ASSERT_TRUE(write_file_atomic("plain.txt", "hello\n"));
  fs::remove("plain.link");
  fs::create_symlink("plain.txt", "plain.link");
  EXPECT_EQ(read_file("plain.link").value_or(""), "hello\n");
  EXPECT_FALSE(read_file("."));
}

}  // namespace
}  // namespace kernelhub::util
