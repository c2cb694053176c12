// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/abi/object_file.hpp>

#include <algorithm>

namespace kernelhub::abi {

std::vector<std::string> ObjectFile::undefined_names() const {
  std::vector<std::string> names;
  if (format == ObjectFormat::elf) {
    for (const auto& symbol : elf.undefined_symbols) {
      names.push_back(symbol.name);
    }
  } else {
    for (const auto& image : mach_o.images) {
      for (const auto& name : image.undefined_symbols) {
        names.push_back(name.starts_with('_') ? name.substr(1) : name);
      }
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

util::Expected<ObjectFile> read_object_file(const ByteSource& source) {
  auto magic = KH_TRY(source.read(0, std::min<std::uint64_t>(source.size(), 8)));
  ObjectFile object;
  if (is_elf(magic)) {
    object.format = ObjectFormat::elf;
    object.elf = KH_TRY(read_elf(source));
  } else if (is_macho(magic)) {
    object.format = ObjectFormat::mach_o;
    object.mach_o = KH_TRY(read_macho(source));
  } else if (magic.starts_with("MZ")) {
    return util::fail("a Windows PE file; only ELF and Mach-O libraries can be checked");
  } else {
    return util::fail("not an ELF or Mach-O file");
  }
  return object;
}

}  // namespace kernelhub::abi
