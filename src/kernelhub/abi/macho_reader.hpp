// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/abi/byte_source.hpp>
#include <kernelhub/util/expected.hpp>

namespace kernelhub::abi {

// A macOS version as Mach-O load commands encode it: xxxx.yy.zz in one 32-bit word.
struct MacOSVersion {
  std::uint32_t encoded = 0;

  std::uint32_t major() const { return encoded >> 16; }
  std::uint32_t minor() const { return (encoded >> 8) & 0xff; }
  std::uint32_t patch() const { return encoded & 0xff; }
  // "15.0", or "14.2.1" when the patch level is set.
  std::string to_string() const;
};

// One architecture's image; a universal ("fat") file holds several.
struct MachOImage {
  std::uint32_t cpu_type = 0;
  bool is_64_bit = true;
  // LC_BUILD_VERSION's minos for the macOS platform, else LC_VERSION_MIN_MACOSX's version.
  std::optional<MacOSVersion> min_macos;
  std::vector<std::string> undefined_symbols;  // raw names, with the leading underscore
};

struct MachOFile {
  std::vector<MachOImage> images;
};

// True when `bytes` (the file's first bytes) start with a Mach-O or universal-binary magic.
bool is_macho(std::string_view bytes);

// Reads a thin or universal Mach-O file, 32- or 64-bit, either byte order. Malformed input
// gives an error value; no input makes it read outside `source` or loop without bound.
util::Expected<MachOFile> read_macho(const ByteSource& source);

}  // namespace kernelhub::abi
