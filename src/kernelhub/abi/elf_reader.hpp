// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/abi/byte_source.hpp>
#include <kernelhub/abi/field_reader.hpp>
#include <kernelhub/util/expected.hpp>

namespace kernelhub::abi {

enum class ElfClass { elf32, elf64 };

// An undefined dynamic symbol: what the library needs from others at load time.
struct ElfSymbol {
  std::string name;
  std::string version;       // "GLIBC_2.34"; empty when unversioned
  std::string version_file;  // the verneed entry's file, "libc.so.6"; empty when unversioned
  bool weak = false;

  friend bool operator==(const ElfSymbol&, const ElfSymbol&) = default;
};

// One version a library requires from another (a verneed auxiliary entry). The dynamic
// loader checks every one of these when it loads the library, whether or not a symbol uses it.
struct ElfVersionNeed {
  std::string file;     // "libc.so.6"
  std::string version;  // "GLIBC_2.34"

  friend bool operator==(const ElfVersionNeed&, const ElfVersionNeed&) = default;
};

// What the ABI rules need from an ELF shared library, read from its section headers and the
// dynamic sections (.dynsym, .gnu.version, .gnu.version_r, .dynamic). .symtab is ignored: a
// stripped library has none, and the loader never looks at it.
struct ElfFile {
  ElfClass elf_class = ElfClass::elf64;
  Endianness endianness = Endianness::little;
  std::uint16_t machine = 0;  // e_machine
  std::string soname;
  std::vector<std::string> needed;  // DT_NEEDED, in file order
  std::vector<ElfVersionNeed> version_needs;
  std::vector<ElfSymbol> undefined_symbols;  // in .dynsym order
};

// True when `bytes` (the file's first bytes) start with the ELF magic.
bool is_elf(std::string_view bytes);

// Reads an ELF file of either class and byte order. Malformed input gives an error value
// naming what is wrong; no input makes it read outside `source` or loop without bound.
util::Expected<ElfFile> read_elf(const ByteSource& source);

// The manylinux policy's name for the file's architecture ("x86_64", "aarch64", "ppc64le"),
// or "" when no policy covers it.
std::string_view elf_architecture(const ElfFile& file);

}  // namespace kernelhub::abi
