// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/abi/elf_reader.hpp>

#include <algorithm>
#include <cstdlib>

#include <gtest/gtest.h>

#include "abi_test_support.hpp"

namespace kernelhub::abi {
namespace {

using testing::compile_library;
using testing::read_bytes;

const ElfSymbol* find_symbol(const ElfFile& file, std::string_view name) {
  for (const auto& symbol : file.undefined_symbols) {
    if (symbol.name == name) {
      return &symbol;
    }
  }
  return nullptr;
}

constexpr const char* k_threads = R"(
#include <pthread.h>
static void* run(void* arg) { return arg; }
int start(void) { pthread_t t; return pthread_create(&t, 0, run, 0); }
)";

TEST(ElfReader, ReadsUndefinedSymbolsWithTheirVersions) {
  ASSERT_TRUE(compile_library("libthreads.so", k_threads, "-Wl,-soname,libthreads.so.1"));
  auto bytes = read_bytes("libthreads.so");
  auto file = read_elf(MemoryByteSource(bytes));
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->elf_class, ElfClass::elf64);
  EXPECT_EQ(file->endianness, Endianness::little);
  EXPECT_EQ(elf_architecture(*file), "x86_64");
  EXPECT_EQ(file->soname, "libthreads.so.1");
  EXPECT_NE(std::find(file->needed.begin(), file->needed.end(), "libc.so.6"), file->needed.end());

  const auto* create = find_symbol(*file, "pthread_create");
  ASSERT_NE(create, nullptr);
  // This machine's glibc (2.36) moved pthread_create into libc at 2.34.
  EXPECT_EQ(create->version, "GLIBC_2.34");
  EXPECT_EQ(create->version_file, "libc.so.6");
  EXPECT_EQ(find_symbol(*file, "start"), nullptr) << "defined symbols are not undefined ones";

  bool listed = std::any_of(file->version_needs.begin(), file->version_needs.end(),
                            [](const ElfVersionNeed& need) {
                              return need.file == "libc.so.6" && need.version == "GLIBC_2.34";
                            });
  EXPECT_TRUE(listed);
}

TEST(ElfReader, WeakAndUnversionedSymbols) {
  ASSERT_TRUE(compile_library("libweak.so", R"(
extern void maybe(void) __attribute__((weak));
extern int PyLong_AsLong(void*);
int call(void) { if (maybe) maybe(); return PyLong_AsLong(0); }
)"));
  auto bytes = read_bytes("libweak.so");
  auto file = read_elf(MemoryByteSource(bytes));
  ASSERT_TRUE(file) << file.error().message;
  const auto* maybe = find_symbol(*file, "maybe");
  ASSERT_NE(maybe, nullptr);
  EXPECT_TRUE(maybe->weak);
  const auto* py = find_symbol(*file, "PyLong_AsLong");
  ASSERT_NE(py, nullptr);
  EXPECT_FALSE(py->weak);
  EXPECT_EQ(py->version, "");
}

TEST(ElfReader, StrippedLibraryKeepsItsDynamicSymbols) {
  ASSERT_TRUE(compile_library("libstripped.so", k_threads));
  if (std::system("strip libstripped.so 2>/dev/null") != 0) {
    GTEST_SKIP() << "strip is not installed";
  }
  auto bytes = read_bytes("libstripped.so");
  auto file = read_elf(MemoryByteSource(bytes));
  ASSERT_TRUE(file) << file.error().message;
  ASSERT_NE(find_symbol(*file, "pthread_create"), nullptr);
  EXPECT_EQ(find_symbol(*file, "pthread_create")->version, "GLIBC_2.34");
}

TEST(ElfReader, FileSourceReadsTheSameAsMemory) {
  ASSERT_TRUE(compile_library("libthreads.so", k_threads));
  auto source = FileByteSource::open("libthreads.so");
  ASSERT_TRUE(source) << source.error().message;
  auto from_file = read_elf(*source);
  auto bytes = read_bytes("libthreads.so");
  auto from_memory = read_elf(MemoryByteSource(bytes));
  ASSERT_TRUE(from_file && from_memory);
  EXPECT_EQ(from_file->undefined_symbols, from_memory->undefined_symbols);
  EXPECT_EQ(from_file->needed, from_memory->needed);
}

TEST(ElfReader, RejectsWhatIsNotElf) {
  EXPECT_FALSE(read_elf(MemoryByteSource("")));
  auto not_elf = read_elf(MemoryByteSource("#!/bin/sh\necho hi\n"));
  ASSERT_FALSE(not_elf);
  EXPECT_EQ(not_elf.error().message, "not an ELF file");
  auto header = std::string("\x7f" "ELF\x07\x01", 6) + std::string(64, '\0');
  auto bad_class = read_elf(MemoryByteSource(header));
  ASSERT_FALSE(bad_class);
  EXPECT_NE(bad_class.error().message.find("class"), std::string::npos);
}

TEST(ElfReader, EveryTruncationIsAnErrorNotACrash) {
  ASSERT_TRUE(compile_library("libthreads.so", k_threads));
  auto bytes = read_bytes("libthreads.so");
  // The linker writes the section headers last, so every cut loses them or a table they
  // point to: the reader must fail cleanly each time (ASan builds turn an out-of-bounds read
  // into a failure).
  for (std::size_t length = 0; length < bytes.size(); length += 97) {
    auto cut = std::string_view(bytes).substr(0, length);
    EXPECT_FALSE(read_elf(MemoryByteSource(cut))) << "length " << length;
  }
}

TEST(ElfReader, CorruptedSectionHeadersAreErrors) {
  ASSERT_TRUE(compile_library("libthreads.so", k_threads));
  auto bytes = read_bytes("libthreads.so");
  // e_shoff (offset 40 in ELF64) pointing past the end of the file.
  auto corrupt = bytes;
  for (int i = 0; i < 8; ++i) {
    corrupt[40 + i] = '\x7f';
  }
  EXPECT_FALSE(read_elf(MemoryByteSource(corrupt)));
  // No section headers at all.
  auto none = bytes;
  for (int i = 0; i < 8; ++i) {
    none[40 + i] = '\0';
  }
  auto result = read_elf(MemoryByteSource(none));
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("no section headers"), std::string::npos);
}

TEST(ElfReader, ArchitectureNames) {
  ElfFile file;
  file.machine = 183;
  EXPECT_EQ(elf_architecture(file), "aarch64");
  file.machine = 21;
  file.endianness = Endianness::big;
  EXPECT_EQ(elf_architecture(file), "ppc64");
  file.endianness = Endianness::little;
  EXPECT_EQ(elf_architecture(file), "ppc64le");
  file.machine = 9999;
  EXPECT_EQ(elf_architecture(file), "");
}

}  // namespace
}  // namespace kernelhub::abi
