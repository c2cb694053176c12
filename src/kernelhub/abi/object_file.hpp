// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include <kernelhub/abi/byte_source.hpp>
#include <kernelhub/abi/elf_reader.hpp>
#include <kernelhub/abi/macho_reader.hpp>
#include <kernelhub/util/expected.hpp>

namespace kernelhub::abi {

enum class ObjectFormat { elf, mach_o };

// A shared library of either format the checker understands; `elf` or `mach_o` is filled
// according to `format`.
struct ObjectFile {
  ObjectFormat format = ObjectFormat::elf;
  ElfFile elf;
  MachOFile mach_o;

  // The undefined symbols as the C compiler names them (Mach-O's leading underscore removed),
  // sorted and unique: the input of the rules that apply to every format.
  std::vector<std::string> undefined_names() const;
};

// Reads an ELF or Mach-O file; anything else (PE, scripts, archives) is an error value.
util::Expected<ObjectFile> read_object_file(const ByteSource& source);

}  // namespace kernelhub::abi
