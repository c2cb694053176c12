// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <kernelhub/builder/file_difference.hpp>
#include <kernelhub/util/file_io.hpp>

#include "../test_support.hpp"

namespace kernelhub::builder {
namespace {

namespace fs = std::filesystem;

using kernelhub::testing::write;

TEST(FileDifference, TextNamesTheFirstDifferingLine) {
  EXPECT_EQ(describe_difference("a\nb\n", "a\nb\n"), std::nullopt);
  EXPECT_EQ(describe_difference("a\nx = 1\nc\n", "a\nx = 2\nc\n"),
            "line 2: published \"x = 1\", rebuilt \"x = 2\"");
  EXPECT_EQ(describe_difference("a\n", "a\nb\n"), "line 2: only in the rebuilt file: \"b\"");
  EXPECT_EQ(describe_difference("a\nb\n", "a\n"), "line 2: only in the published file: \"b\"");
  EXPECT_EQ(describe_difference("a", "a\n"), "line 1: one file ends without a newline");
}

TEST(FileDifference, BinaryNamesTheFirstDifferingByte) {
  using namespace std::string_literals;
  EXPECT_EQ(describe_difference("ab\0c"s, "ab\0d"s),
            "byte 3 differs (4 bytes published, 4 rebuilt)");
  EXPECT_EQ(describe_difference("ab\0"s, "ab\0cd"s), "sizes differ (3 bytes published, 5 rebuilt)");
}

// A shared library compiled at test time, then one byte of its .rodata string changed.
TEST(FileDifference, ElfNamesTheSectionThatDiffers) {
  write("lib.c", "const char k_text[] = \"kernelhub-marker-string\";\n"
                 "int answer(void) { return 42; }\n");
  if (std::system("cc -shared -fPIC -O1 -o lib.so lib.c 2>/dev/null") != 0) {
    GTEST_SKIP() << "no C compiler";
  }
  const auto original = util::read_file("lib.so").value();
  auto changed = original;
  const auto at = changed.find("kernelhub-marker-string");
  ASSERT_NE(at, std::string::npos);
  changed[at] = 'K';
  const auto hint = describe_difference(original, changed);
  ASSERT_TRUE(hint.has_value());
  EXPECT_EQ(hint->rfind("ELF section .rodata differs", 0), 0U) << *hint;

  // Truncated section headers: no section table to read, so the byte hint.
  const auto cut = original.substr(0, 0x40) + "x";
  const auto fallback = describe_difference(original.substr(0, 0x41), cut);
  ASSERT_TRUE(fallback.has_value());
  EXPECT_EQ(fallback->rfind("byte 64 differs", 0), 0U) << *fallback;
}

TEST(FileDifference, FoldersInPathOrderWithoutBytecodeOrSignature) {
  for (const auto* side : {"a", "b"}) {
    write(fs::path(side) / "metadata.json", "{}\n");
    write(fs::path(side) / "relu" / "__init__.py", "x = 1\n");
  }
  write("a/relu/__pycache__/__init__.cpython-311.pyc", "bytecode");
  write("a/metadata.json.sigstore", "signature");
  write("b/relu/stray.pyc", "bytecode");
  EXPECT_EQ(variant_file_list("a").value(),
            (std::vector<std::string>{"metadata.json", "relu/__init__.py"}));
  EXPECT_EQ(first_difference("a", "b").value(), std::nullopt);

  write("b/relu/__init__.py", "x = 2\n");
  write("b/relu/zzz.py", "new\n");
  EXPECT_EQ(first_difference("a", "b").value(),
            (FileDifference{"relu/__init__.py", "line 1: published \"x = 1\", rebuilt \"x = 2\""}));
  write("b/relu/__init__.py", "x = 1\n");
  EXPECT_EQ(first_difference("a", "b").value(),
            (FileDifference{"relu/zzz.py", "only in the rebuilt variant"}));
  write("a/relu/zzz.py", "new\n");
  write("a/relu/_ops.py", "ops\n");
  EXPECT_EQ(first_difference("a", "b").value(),
            (FileDifference{"relu/_ops.py", "only in the published variant"}));
}

}  // namespace
}  // namespace kernelhub::builder
