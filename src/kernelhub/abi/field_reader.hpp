// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string_view>

namespace kernelhub::abi {

enum class Endianness { little, big };

// Unsigned fields of a binary structure held in `bytes`, in the file's byte order. A field
// past the end reads as 0: the readers fetch each structure at its full size first, so this
// only guards against a mistake, it never hides a short file.
class FieldReader {
 public:
  FieldReader(std::string_view bytes, Endianness endianness)
      : m_bytes(bytes), m_endianness(endianness) {}

  std::uint64_t read(std::size_t offset, std::size_t width) const {
    if (offset > m_bytes.size() || width > m_bytes.size() - offset) {
      return 0;
    }
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < width; ++i) {
      auto byte = static_cast<std::uint8_t>(
          m_bytes[offset + (m_endianness == Endianness::little ? width - 1 - i : i)]);
      value = (value << 8) | byte;
    }
    return value;
  }
  std::uint8_t u8(std::size_t offset) const { return static_cast<std::uint8_t>(read(offset, 1)); }
  std::uint16_t u16(std::size_t offset) const {
    return static_cast<std::uint16_t>(read(offset, 2));
  }
  std::uint32_t u32(std::size_t offset) const {
    return static_cast<std::uint32_t>(read(offset, 4));
  }
  std::uint64_t u64(std::size_t offset) const { return read(offset, 8); }

 private:
  std::string_view m_bytes;
  Endianness m_endianness;
};

// The NUL-terminated string at `offset` in a string table; nullopt-like empty view with
// `ok == false` when the offset is outside the table or the string runs off its end.
struct TableString {
  std::string_view text;
  bool ok = false;
};

inline TableString string_at(std::string_view table, std::uint64_t offset) {
  if (offset >= table.size()) {
    return {};
  }
  auto end = table.find('\0', offset);
  if (end == std::string_view::npos) {
    return {};
  }
  return {table.substr(offset, end - offset), true};
}

}  // namespace kernelhub::abi
