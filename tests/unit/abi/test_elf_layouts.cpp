// SPDX-License-Identifier: Apache-2.0
// The ELF reader on both classes and byte orders, with files assembled here: this machine's
// compiler only makes 64-bit little-endian libraries, but i686 (ELF32) and ppc64 / s390x
// (big-endian) are manylinux architectures too.
#include <kernelhub/abi/elf_reader.hpp>

#include <gtest/gtest.h>

namespace kernelhub::abi {
namespace {

class Writer {
 public:
  explicit Writer(bool big_endian) : m_big(big_endian) {}
  void put(std::uint64_t value, int width) {
    for (int i = 0; i < width; ++i) {
      int shift = 8 * (m_big ? width - 1 - i : i);
      m_out.push_back(static_cast<char>((value >> shift) & 0xff));
    }
  }
  void pad_to(std::size_t size) { m_out.resize(size, '\0'); }
  std::string& bytes() { return m_out; }

 private:
  bool m_big;
  std::string m_out;
};

// A shared library needing pthread_create@GLIBC_2.34 from libc.so.6, with only the sections
// the reader uses: .dynstr, .dynsym, .gnu.version, .gnu.version_r and .dynamic.
std::string make_elf(bool is_64, bool big_endian, std::uint16_t machine) {
  const std::string strings = std::string("\0libc.so.6\0GLIBC_2.34\0pthread_create\0", 37);
  const std::uint32_t libc = 1, glibc = 11, pthread = 22;
  const int word = is_64 ? 8 : 4;
  const std::size_t header = is_64 ? 64 : 52, symbol = is_64 ? 24 : 16, dyn = is_64 ? 16 : 8;
  const std::size_t section = is_64 ? 64 : 40;
  // File layout: header, then each section's contents, then the section header table.
  const std::size_t dynstr_at = header, dynsym_at = 128, versym_at = 192, verneed_at = 200,
                    dynamic_at = 240, sections_at = 288;
  Writer w(big_endian);
  w.bytes() = std::string("\x7f" "ELF", 4);
  w.put(is_64 ? 2 : 1, 1);
  w.put(big_endian ? 2 : 1, 1);
  w.put(1, 1);
  w.pad_to(16);
  w.put(3, 2);  // ET_DYN
  w.put(machine, 2);
  w.put(1, 4);
  w.put(0, word);  // entry
  w.put(0, word);  // phoff
  w.put(sections_at, word);
  w.put(0, 4);  // flags
  w.put(header, 2);
  w.put(0, 2);
  w.put(0, 2);
  w.put(section, 2);
  w.put(6, 2);  // sections
  w.put(0, 2);
  w.pad_to(dynstr_at);
  w.bytes() += strings;
  w.pad_to(dynsym_at + symbol);  // symbol 0 is null
  if (is_64) {
    w.put(pthread, 4), w.put(0x12, 1), w.put(0, 1), w.put(0, 2), w.put(0, 8), w.put(0, 8);
  } else {
    w.put(pthread, 4), w.put(0, 4), w.put(0, 4), w.put(0x12, 1), w.put(0, 1), w.put(0, 2);
  }
  w.pad_to(versym_at);
  w.put(0, 2), w.put(2, 2);
  w.pad_to(verneed_at);
  w.put(1, 2), w.put(1, 2), w.put(libc, 4), w.put(16, 4), w.put(0, 4);               // Verneed
  w.put(0, 4), w.put(0, 2), w.put(2, 2), w.put(glibc, 4), w.put(0, 4);               // Vernaux
  w.pad_to(dynamic_at);
  w.put(1, word), w.put(libc, word);  // DT_NEEDED
  w.put(0, word), w.put(0, word);     // DT_NULL
  w.pad_to(sections_at + section);    // section 0 is null
  struct Entry {
    std::uint32_t type;
    std::size_t offset, size;
    std::uint32_t link, info;
  };
  const Entry entries[] = {{3, dynstr_at, strings.size(), 0, 0},
                           {11, dynsym_at, 2 * symbol, 1, 1},
                           {0x6fffffff, versym_at, 4, 2, 0},
                           {0x6ffffffe, verneed_at, 32, 1, 1},
                           {6, dynamic_at, 2 * dyn, 1, 0}};
  for (const auto& e : entries) {
    w.put(0, 4), w.put(e.type, 4), w.put(0, word), w.put(0, word);
    w.put(e.offset, word), w.put(e.size, word), w.put(e.link, 4), w.put(e.info, 4);
    w.put(0, word), w.put(0, word);
  }
  return w.bytes();
}

struct Case {
  bool is_64;
  bool big_endian;
  std::uint16_t machine;
  std::string_view arch;
};

class ElfLayouts : public ::testing::TestWithParam<Case> {};

TEST_P(ElfLayouts, ReadsVersionedUndefinedSymbol) {
  const auto& c = GetParam();
  auto bytes = make_elf(c.is_64, c.big_endian, c.machine);
  auto file = read_elf(MemoryByteSource(bytes));
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->elf_class, c.is_64 ? ElfClass::elf64 : ElfClass::elf32);
  EXPECT_EQ(elf_architecture(*file), c.arch);
  EXPECT_EQ(file->needed, std::vector<std::string>{"libc.so.6"});
  ASSERT_EQ(file->undefined_symbols.size(), 1u);
  EXPECT_EQ(file->undefined_symbols[0], (ElfSymbol{"pthread_create", "GLIBC_2.34", "libc.so.6"}));
  EXPECT_EQ(file->version_needs, (std::vector<ElfVersionNeed>{{"libc.so.6", "GLIBC_2.34"}}));
}

INSTANTIATE_TEST_SUITE_P(, ElfLayouts,
                         ::testing::Values(Case{true, false, 62, "x86_64"},
                                           Case{false, false, 3, "i686"},
                                           Case{true, true, 21, "ppc64"},
                                           Case{true, true, 22, "s390x"},
                                           Case{false, true, 40, "armv7l"}));

TEST(ElfLayoutEdges, OverlappingVersionNeedsAreBounded) {
  auto bytes = make_elf(true, false, 62);
  // vn_cnt = 0xffff auxiliary entries, each vna_next = 1 byte on: the walk must stop at the
  // section's end instead of reading 65535 overlapping entries.
  bytes[200 + 2] = '\xff';
  bytes[200 + 3] = '\xff';
  bytes[200 + 16 + 12] = '\x01';
  auto file = read_elf(MemoryByteSource(bytes));
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().message, "version need entries run past their section");
}

TEST(ElfLayoutEdges, SymbolNameOutsideStringTable) {
  auto bytes = make_elf(true, false, 62);
  bytes[128 + 24] = '\x7f';  // st_name of symbol 1
  auto file = read_elf(MemoryByteSource(bytes));
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().message.find("outside its string table"), std::string::npos);
}

}  // namespace
}  // namespace kernelhub::abi
