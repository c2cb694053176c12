// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/abi/macho_reader.hpp>

#include <fmt/format.h>

#include <kernelhub/abi/check_step.hpp>

#include <kernelhub/abi/field_reader.hpp>

namespace kernelhub::abi {

namespace {

// Values from <mach-o/loader.h>, <mach-o/nlist.h> and <mach-o/fat.h>.
constexpr std::uint32_t k_magic_32 = 0xfeedface;
constexpr std::uint32_t k_magic_64 = 0xfeedfacf;
constexpr std::uint32_t k_fat_magic = 0xcafebabe;
constexpr std::uint32_t k_fat_magic_64 = 0xcafebabf;
constexpr std::uint32_t k_lc_symtab = 0x2;
constexpr std::uint32_t k_lc_version_min_macosx = 0x24;
constexpr std::uint32_t k_lc_build_version = 0x32;
constexpr std::uint32_t k_platform_macos = 1;
constexpr std::uint8_t k_n_stab = 0xe0;
constexpr std::uint8_t k_n_type = 0x0e;
constexpr std::uint8_t k_n_ext = 0x01;
// A universal file names a handful of architectures; more is a malformed header.
constexpr std::uint32_t k_max_fat_images = 64;

std::uint32_t big_endian_u32(std::string_view bytes) {
  return FieldReader(bytes, Endianness::big).u32(0);
}

// A thin image that starts at `base` and is `length` bytes long.
class ImageParser {
 public:
  ImageParser(const ByteSource& source, std::uint64_t base, std::uint64_t length)
      : m_source(source), m_base(base), m_length(length) {}

  util::Expected<MachOImage> parse() {
    auto magic_bytes = KH_TRY(read(0, 4));
    if (FieldReader(magic_bytes, Endianness::little).u32(0) == k_magic_64 ||
        FieldReader(magic_bytes, Endianness::little).u32(0) == k_magic_32) {
      m_endianness = Endianness::little;
    } else if (big_endian_u32(magic_bytes) == k_magic_64 ||
               big_endian_u32(magic_bytes) == k_magic_32) {
      m_endianness = Endianness::big;
    } else {
      return util::fail("not a Mach-O image");
    }
    m_image.is_64_bit = FieldReader(magic_bytes, m_endianness).u32(0) == k_magic_64;
    std::uint64_t header_size = m_image.is_64_bit ? 32 : 28;
    auto header_bytes = KH_TRY(read(0, header_size));
    FieldReader header(header_bytes, m_endianness);
    m_image.cpu_type = header.u32(4);
    auto commands = KH_TRY(read(header_size, header.u32(20)));
    KH_ABI_CHECK(read_commands(commands, header.u32(16)));
    return std::move(m_image);
  }

 private:
  util::Expected<std::string> read(std::uint64_t offset, std::uint64_t length) const {
    if (offset > m_length || length > m_length - offset) {
      return util::fail(fmt::format("{} bytes at offset {} lie outside the Mach-O image", length,
                                    offset));
    }
    return m_source.read(m_base + offset, length);
  }

  util::Expected<void> read_commands(std::string_view commands, std::uint32_t count) {
    std::uint64_t offset = 0;
    std::optional<MacOSVersion> version_min;
    for (std::uint32_t i = 0; i < count; ++i) {
      if (commands.size() - offset < 8) {
        return util::fail("load commands run past sizeofcmds");
      }
      FieldReader command(commands.substr(offset), m_endianness);
      std::uint32_t kind = command.u32(0);
      std::uint32_t size = command.u32(4);
      if (size < 8 || size > commands.size() - offset) {
        return util::fail(fmt::format("load command {} has a bad size {}", i, size));
      }
      if (kind == k_lc_build_version && size >= 16 && command.u32(8) == k_platform_macos &&
          !m_image.min_macos) {
        m_image.min_macos = MacOSVersion{command.u32(12)};
      } else if (kind == k_lc_version_min_macosx && size >= 16 && !version_min) {
        version_min = MacOSVersion{command.u32(8)};
      } else if (kind == k_lc_symtab && size >= 24) {
        KH_ABI_CHECK(
            read_symbols(command.u32(8), command.u32(12), command.u32(16), command.u32(20)));
      }
      offset += size;
    }
    if (!m_image.min_macos) {
      m_image.min_macos = version_min;
    }
    return {};
  }

  util::Expected<void> read_symbols(std::uint32_t symbol_offset, std::uint32_t count,
                                    std::uint32_t string_offset, std::uint32_t string_size) {
    std::uint64_t entry_size = m_image.is_64_bit ? 16 : 12;
    auto table = KH_TRY(read(symbol_offset, std::uint64_t{count} * entry_size));
    auto strings = KH_TRY(read(string_offset, string_size));
    for (std::uint64_t i = 0; i < count; ++i) {
      FieldReader entry(std::string_view(table).substr(i * entry_size, entry_size), m_endianness);
      std::uint8_t type = entry.u8(4);
      std::uint64_t value = m_image.is_64_bit ? entry.u64(8) : entry.u32(8);
      // External, undefined (not a debugger entry) and not a common symbol.
      if ((type & k_n_stab) != 0 || (type & k_n_type) != 0 || (type & k_n_ext) == 0 ||
          value != 0) {
        continue;
      }
      auto name = string_at(strings, entry.u32(0));
      if (!name.ok) {
        return util::fail(fmt::format("symbol {} has a name outside the string table", i));
      }
      if (!name.text.empty()) {
        m_image.undefined_symbols.emplace_back(name.text);
      }
    }
    return {};
  }

  const ByteSource& m_source;
  std::uint64_t m_base;
  std::uint64_t m_length;
  Endianness m_endianness = Endianness::little;
  MachOImage m_image;
};

}  // namespace

std::string MacOSVersion::to_string() const {
  if (patch() != 0) {
    return fmt::format("{}.{}.{}", major(), minor(), patch());
  }
  return fmt::format("{}.{}", major(), minor());
}

bool is_macho(std::string_view bytes) {
  if (bytes.size() < 4) {
    return false;
  }
  auto little = FieldReader(bytes, Endianness::little).u32(0);
  auto big = big_endian_u32(bytes);
  for (auto magic : {k_magic_32, k_magic_64}) {
    if (little == magic || big == magic) {
      return true;
    }
  }
  return big == k_fat_magic || big == k_fat_magic_64;
}

util::Expected<MachOFile> read_macho(const ByteSource& source) {
  auto magic_bytes = KH_TRY(source.read(0, 8));
  auto magic = big_endian_u32(magic_bytes);
  MachOFile file;
  if (magic != k_fat_magic && magic != k_fat_magic_64) {
    file.images.push_back(KH_TRY(ImageParser(source, 0, source.size()).parse()));
    return file;
  }
  // Universal headers are always big-endian; fat_arch is 20 bytes, fat_arch_64 is 32.
  auto count = FieldReader(magic_bytes, Endianness::big).u32(4);
  if (count == 0 || count > k_max_fat_images) {
    return util::fail(fmt::format("universal binary names {} architectures", count));
  }
  bool wide = magic == k_fat_magic_64;
  std::uint64_t entry_size = wide ? 32 : 20;
  auto entries = KH_TRY(source.read(8, count * entry_size));
  for (std::uint32_t i = 0; i < count; ++i) {
    FieldReader entry(std::string_view(entries).substr(i * entry_size, entry_size),
                      Endianness::big);
    std::uint64_t offset = wide ? entry.u64(8) : entry.u32(8);
    std::uint64_t size = wide ? entry.u64(16) : entry.u32(12);
    if (offset > source.size() || size > source.size() - offset) {
      return util::fail(fmt::format("architecture {} lies outside the file", i));
    }
    file.images.push_back(KH_TRY(ImageParser(source, offset, size).parse()));
  }
  return file;
}

}  // namespace kernelhub::abi
