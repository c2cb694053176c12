// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/abi/macho_reader.hpp>

#include <gtest/gtest.h>

#include "abi_test_support.hpp"

namespace kernelhub::abi {
namespace {

using testing::Bytes;
using testing::macho_dylib;

constexpr std::uint32_t k_macos_15 = 15u << 16;
constexpr std::uint32_t k_macos_26 = 26u << 16;

TEST(MachOReader, ReadsMinimumVersionAndUndefinedSymbols) {
  auto bytes = macho_dylib(k_macos_15 | (2u << 8) | 1u, true, {"_PyLong_AsLong", "_malloc"});
  auto file = read_macho(MemoryByteSource(bytes));
  ASSERT_TRUE(file) << file.error().message;
  ASSERT_EQ(file->images.size(), 1u);
  const auto& image = file->images[0];
  EXPECT_TRUE(image.is_64_bit);
  ASSERT_TRUE(image.min_macos);
  EXPECT_EQ(image.min_macos->to_string(), "15.2.1");
  EXPECT_EQ(image.undefined_symbols, (std::vector<std::string>{"_PyLong_AsLong", "_malloc"}));
}

TEST(MachOReader, MissingBuildVersion) {
  auto bytes = macho_dylib(0, false, {});
  auto file = read_macho(MemoryByteSource(bytes));
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_FALSE(file->images[0].min_macos);
}

TEST(MachOReader, UniversalBinaryHasOneImagePerArchitecture) {
  auto first = macho_dylib(k_macos_15, true, {"_a"});
  auto second = macho_dylib(k_macos_26, true, {"_b"});
  // fat_header and two fat_arch entries, big-endian, images aligned at 4096.
  auto be32 = [](std::string& out, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) {
      out.push_back(static_cast<char>((v >> shift) & 0xff));
    }
  };
  std::string fat;
  be32(fat, 0xcafebabe);
  be32(fat, 2);
  std::uint32_t offset = 4096;
  for (const auto* image : {&first, &second}) {
    be32(fat, 0x01000007);
    be32(fat, 3);
    be32(fat, offset);
    be32(fat, static_cast<std::uint32_t>(image->size()));
    be32(fat, 12);
    offset += 4096;
  }
  fat.resize(4096, '\0');
  fat += first;
  fat.resize(8192, '\0');
  fat += second;
  auto file = read_macho(MemoryByteSource(fat));
  ASSERT_TRUE(file) << file.error().message;
  ASSERT_EQ(file->images.size(), 2u);
  EXPECT_EQ(file->images[1].min_macos->to_string(), "26.0");
  EXPECT_EQ(file->images[1].undefined_symbols, std::vector<std::string>{"_b"});
}

TEST(MachOReader, TruncationsAndBadSizesAreErrors) {
  auto bytes = macho_dylib(k_macos_15, true, {"_PyLong_AsLong"});
  for (std::size_t length = 0; length < bytes.size(); ++length) {
    auto cut = std::string_view(bytes).substr(0, length);
    EXPECT_FALSE(read_macho(MemoryByteSource(cut))) << "length " << length;
  }
  auto bad = bytes;
  bad[32 + 4] = '\x03';  // the first load command's cmdsize: 3 < 8
  EXPECT_FALSE(read_macho(MemoryByteSource(bad)));
}

TEST(MachOReader, Magic) {
  EXPECT_TRUE(is_macho(macho_dylib(0, false, {})));
  EXPECT_TRUE(is_macho(std::string("\xca\xfe\xba\xbe", 4)));
  EXPECT_FALSE(is_macho("\x7f" "ELF"));
  EXPECT_FALSE(is_macho("ab"));
}

}  // namespace
}  // namespace kernelhub::abi
