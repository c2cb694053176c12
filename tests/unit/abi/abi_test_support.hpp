// SPDX-License-Identifier: Apache-2.0
#pragma once

// Helpers for the abi tests: shared libraries compiled from C snippets at test time (no
// checked-in binaries), and the bytes of Mach-O files assembled in memory.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <kernelhub/abi/abi_data.hpp>

namespace kernelhub::abi::testing {

// The ABI data compiled into the library (the test fails where it does not load).
inline const AbiData& embedded_data() {
  auto loaded = embedded_abi_data();
  EXPECT_TRUE(loaded) << loaded.error().message;
  return **loaded;
}

// Compiles `source` into `name` (a shared library in the current directory) with the
// system's C compiler; returns false when the compiler is missing or fails.
inline bool compile_library(const std::string& name, const std::string& source,
                            const std::string& flags = "") {
  std::ofstream(name + ".c") << source;
  auto command =
      "cc -shared -fPIC -o " + name + " " + name + ".c " + flags + " 2>" + name + ".log";
  return std::system(command.c_str()) == 0;
}

inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Little-endian byte writer for assembling Mach-O images.
class Bytes {
 public:
  Bytes& u8(std::uint8_t v) {
    m_data.push_back(static_cast<char>(v));
    return *this;
  }
  Bytes& u16(std::uint16_t v) { return u8(v & 0xff).u8(v >> 8); }
  Bytes& u32(std::uint32_t v) { return u16(v & 0xffff).u16(v >> 16); }
  Bytes& u64(std::uint64_t v) {
    return u32(v & 0xffffffffu).u32(static_cast<std::uint32_t>(v >> 32));
  }
  Bytes& raw(const std::string& s) {
    m_data += s;
    return *this;
  }
  std::size_t size() const { return m_data.size(); }
  const std::string& str() const { return m_data; }

 private:
  std::string m_data;
};

// A 64-bit little-endian Mach-O dylib with an optional LC_BUILD_VERSION (macOS, `minos`
// encoded as xxxx.yy.zz) and an LC_SYMTAB of undefined external symbols.
inline std::string macho_dylib(std::uint32_t minos, bool with_build_version,
                               const std::vector<std::string>& undefined) {
  std::string strings(1, '\0');
  std::vector<std::uint32_t> offsets;
  for (const auto& name : undefined) {
    offsets.push_back(static_cast<std::uint32_t>(strings.size()));
    strings += name + '\0';
  }
  std::uint32_t commands_size = (with_build_version ? 24 : 0) + 24;
  std::uint32_t symbols_offset = 32 + commands_size;
  std::uint32_t strings_offset = symbols_offset + 16 * static_cast<std::uint32_t>(undefined.size());
  Bytes out;
  out.u32(0xfeedfacf).u32(0x01000007).u32(3).u32(6);  // x86_64, MH_DYLIB
  out.u32(with_build_version ? 2 : 1).u32(commands_size).u32(0).u32(0);
  if (with_build_version) {
    out.u32(0x32).u32(24).u32(1).u32(minos).u32(minos).u32(0);  // LC_BUILD_VERSION
  }
  out.u32(0x2).u32(24).u32(symbols_offset).u32(static_cast<std::uint32_t>(undefined.size()))
      .u32(strings_offset).u32(static_cast<std::uint32_t>(strings.size()));
  for (auto offset : offsets) {
    out.u32(offset).u8(0x01).u8(0).u16(0x0100).u64(0);  // N_EXT | N_UNDF
  }
  out.raw(strings);
  return out.str();
}

}  // namespace kernelhub::abi::testing
