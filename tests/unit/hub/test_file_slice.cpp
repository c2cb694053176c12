// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/file_slice.hpp>

#include <fstream>

#include <gtest/gtest.h>

#include "../test_support.hpp"

namespace kernelhub::hub {
namespace {

using kernelhub::testing::write;

std::string read_all(FileSliceReader& reader, std::size_t piece, std::size_t& largest) {
  std::string out;
  std::string buffer(piece, '\0');
  for (;;) {
    auto got = reader.read(buffer.data(), buffer.size());
    EXPECT_TRUE(got) << got.error().message;
    if (!got || *got == 0) {
      return out;
    }
    largest = std::max(largest, *got);
    out.append(buffer.data(), *got);
  }
}

TEST(FileSlice, ReadsOnlyTheSliceInTheCallersPieces) {
  write("f.bin", "0123456789abcdef");
  auto reader = FileSliceReader::open(FileSlice{"f.bin", 3, 10});
  ASSERT_TRUE(reader) << reader.error().message;
  std::size_t largest = 0;
  EXPECT_EQ(read_all(*reader, 4, largest), "3456789abc");
  EXPECT_EQ(largest, 4u);
  EXPECT_EQ(reader->remaining(), 0u);
}

TEST(FileSlice, SeekGoesBackForARewind) {
  write("f.bin", "0123456789");
  auto reader = FileSliceReader::open(FileSlice{"f.bin", 2, 6});
  ASSERT_TRUE(reader);
  std::size_t largest = 0;
  EXPECT_EQ(read_all(*reader, 100, largest), "234567");
  ASSERT_TRUE(reader->seek(1));
  EXPECT_EQ(read_all(*reader, 100, largest), "34567");
  EXPECT_FALSE(reader->seek(7));
}

TEST(FileSlice, AFileShorterThanTheSliceIsRefused) {
  write("f.bin", "0123");
  auto reader = FileSliceReader::open(FileSlice{"f.bin", 2, 6});
  ASSERT_FALSE(reader);
  EXPECT_NE(reader.error().message.find("f.bin"), std::string::npos);
  EXPECT_FALSE(FileSliceReader::open(FileSlice{"missing.bin", 0, 1}));
}

TEST(FileSlice, AFileCutWhileReadIsAnError) {
  write("f.bin", "0123456789");
  auto reader = FileSliceReader::open(FileSlice{"f.bin", 0, 10});
  ASSERT_TRUE(reader);
  std::filesystem::resize_file("f.bin", 4);
  std::string buffer(10, '\0');
  auto got = reader->read(buffer.data(), buffer.size());
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message.find("ended early"), std::string::npos) << got.error().message;
}

}  // namespace
}  // namespace kernelhub::hub
