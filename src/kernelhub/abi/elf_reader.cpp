// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/abi/elf_reader.hpp>

#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include <kernelhub/abi/check_step.hpp>

namespace kernelhub::abi {

namespace {

// Values from the System V ABI and the GNU symbol-versioning extension.
constexpr std::uint32_t k_sht_strtab = 3;
constexpr std::uint32_t k_sht_dynamic = 6;
constexpr std::uint32_t k_sht_dynsym = 11;
constexpr std::uint32_t k_sht_gnu_verneed = 0x6ffffffe;
constexpr std::uint32_t k_sht_gnu_versym = 0x6fffffff;
constexpr std::int64_t k_dt_null = 0;
constexpr std::int64_t k_dt_needed = 1;
constexpr std::int64_t k_dt_soname = 14;
constexpr std::uint16_t k_versym_index_mask = 0x7fff;  // the top bit marks a hidden version
constexpr std::uint64_t k_verneed_size = 16;            // Elf{32,64}_Verneed and _Vernaux

struct Section {
  std::uint32_t type = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint32_t link = 0;
  std::uint32_t info = 0;
};

// Field offsets and sizes of the two ELF classes.
struct Layout {
  std::size_t header_size, shoff, shentsize, shnum, shstrndx;
  std::size_t section_size, sh_type, sh_offset, sh_size, sh_link, sh_info, word;
  std::size_t symbol_size, st_name, st_info, st_shndx;
  std::size_t dyn_size;
};

constexpr Layout k_elf64{64, 40, 58, 60, 62, 64, 4, 24, 32, 40, 44, 8, 24, 0, 4, 6, 16};
constexpr Layout k_elf32{52, 32, 46, 48, 50, 40, 4, 16, 20, 24, 28, 4, 16, 0, 12, 14, 8};

class ElfParser {
 public:
  explicit ElfParser(const ByteSource& source) : m_source(source) {}

  util::Expected<ElfFile> parse() {
    auto ident = KH_TRY(m_source.read(0, 16));
    if (!is_elf(ident)) {
      return util::fail("not an ELF file");
    }
    if (ident[4] != 1 && ident[4] != 2) {
      return util::fail(fmt::format("unknown ELF class {}", static_cast<int>(ident[4])));
    }
    if (ident[5] != 1 && ident[5] != 2) {
      return util::fail(fmt::format("unknown ELF byte order {}", static_cast<int>(ident[5])));
    }
    m_file.elf_class = ident[4] == 2 ? ElfClass::elf64 : ElfClass::elf32;
    m_file.endianness = ident[5] == 1 ? Endianness::little : Endianness::big;
    m_layout = m_file.elf_class == ElfClass::elf64 ? &k_elf64 : &k_elf32;

    auto header_bytes = KH_TRY(m_source.read(0, m_layout->header_size));
    FieldReader header(header_bytes, m_file.endianness);
    m_file.machine = header.u16(18);
    KH_ABI_CHECK(read_section_headers(header));

    auto dynsym = find(k_sht_dynsym);
    if (dynsym) {
      KH_ABI_CHECK(read_symbols(*dynsym));
    }
    if (auto dynamic = find(k_sht_dynamic)) {
      KH_ABI_CHECK(read_dynamic(*dynamic));
    }
    return std::move(m_file);
  }

 private:
  FieldReader fields(std::string_view bytes) const { return {bytes, m_file.endianness}; }

  util::Expected<void> read_section_headers(const FieldReader& header) {
    const auto& l = *m_layout;
    std::uint64_t offset = header.read(l.shoff, l.word);
    std::uint64_t entry_size = header.u16(l.shentsize);
    std::uint64_t count = header.u16(l.shnum);
    if (offset == 0) {
      return util::fail("no section headers: cannot locate the dynamic symbol table");
    }
    if (entry_size < l.section_size) {
      return util::fail(fmt::format("section header size {} is too small", entry_size));
    }
    if (count == 0) {
      // More than 0xff00 sections: the real count is in section 0's sh_size.
      auto first = KH_TRY(m_source.read(offset, l.section_size));
      count = fields(first).read(l.sh_size, l.word);
    }
    if (count > m_source.size() / entry_size) {
      return util::fail(fmt::format("{} section headers cannot fit in the file", count));
    }
    auto table = KH_TRY(m_source.read(offset, count * entry_size));
    m_sections.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i) {
      auto entry = fields(std::string_view(table).substr(i * entry_size, entry_size));
      m_sections.push_back(Section{entry.u32(l.sh_type), entry.read(l.sh_offset, l.word),
                                   entry.read(l.sh_size, l.word), entry.u32(l.sh_link),
                                   entry.u32(l.sh_info)});
    }
    return {};
  }

  std::optional<Section> find(std::uint32_t type) const {
    for (const auto& section : m_sections) {
      if (section.type == type) {
        return section;
      }
    }
    return std::nullopt;
  }

  util::Expected<std::string> contents(const Section& section) const {
    return m_source.read(section.offset, section.size);
  }

  // The string table a section links to; it must be a string table.
  util::Expected<std::string> linked_strings(const Section& section) const {
    if (section.link >= m_sections.size() || m_sections[section.link].type != k_sht_strtab) {
      return util::fail(fmt::format("section link {} is not a string table", section.link));
    }
    return contents(m_sections[section.link]);
  }

  static util::Expected<std::string> string(std::string_view table, std::uint64_t offset) {
    auto found = string_at(table, offset);
    if (!found.ok) {
      return util::fail(fmt::format("string offset {} is outside its string table", offset));
    }
    return std::string(found.text);
  }

  // Maps each verneed auxiliary entry's version index (vna_other) to its (file, version).
  util::Expected<std::vector<std::pair<std::uint16_t, ElfVersionNeed>>> read_verneed() {
    std::vector<std::pair<std::uint16_t, ElfVersionNeed>> result;
    auto section = find(k_sht_gnu_verneed);
    if (!section) {
      return result;
    }
    auto bytes = KH_TRY(contents(*section));
    auto strings = KH_TRY(linked_strings(*section));
    // Every entry takes 16 bytes, so the section size bounds the walk even if the
    // next-pointers form a cycle.
    std::uint64_t budget = bytes.size() / k_verneed_size;
    std::uint64_t offset = 0;
    for (std::uint32_t i = 0; i < section->info && budget > 0; ++i, --budget) {
      if (offset > bytes.size() || bytes.size() - offset < k_verneed_size) {
        return util::fail("version needs run past their section");
      }
      auto need = fields(std::string_view(bytes).substr(offset, k_verneed_size));
      auto file = KH_TRY(string(strings, need.u32(4)));
      std::uint64_t aux = offset + need.u32(8);
      for (std::uint16_t j = 0; j < need.u16(2) && budget > 0; ++j, --budget) {
        if (aux > bytes.size() || bytes.size() - aux < k_verneed_size) {
          return util::fail("version need entries run past their section");
        }
        auto entry = fields(std::string_view(bytes).substr(aux, k_verneed_size));
        auto version = KH_TRY(string(strings, entry.u32(8)));
        result.emplace_back(static_cast<std::uint16_t>(entry.u16(6) & k_versym_index_mask),
                            ElfVersionNeed{file, std::move(version)});
        if (entry.u32(12) == 0) {
          break;
        }
        aux += entry.u32(12);
      }
      if (need.u32(12) == 0) {
        break;
      }
      offset += need.u32(12);
    }
    for (const auto& [index, need] : result) {
      m_file.version_needs.push_back(need);
    }
    return result;
  }

  util::Expected<void> read_symbols(const Section& dynsym) {
    const auto& l = *m_layout;
    auto versions = KH_TRY(read_verneed());
    auto table = KH_TRY(contents(dynsym));
    auto strings = KH_TRY(linked_strings(dynsym));
    std::string versym;
    if (auto section = find(k_sht_gnu_versym)) {
      versym = KH_TRY(contents(*section));
    }
    auto versym_fields = fields(versym);
    std::unordered_map<std::uint16_t, std::size_t> by_index;
    for (std::size_t i = 0; i < versions.size(); ++i) {
      by_index.emplace(versions[i].first, i);
    }
    std::uint64_t count = table.size() / l.symbol_size;
    // Entry 0 is the reserved null symbol.
    for (std::uint64_t i = 1; i < count; ++i) {
      auto symbol = fields(std::string_view(table).substr(i * l.symbol_size, l.symbol_size));
      if (symbol.u16(l.st_shndx) != 0 || symbol.u32(l.st_name) == 0) {
        continue;  // defined here, or nameless
      }
      ElfSymbol out;
      out.name = KH_TRY(string(strings, symbol.u32(l.st_name)));
      out.weak = (symbol.u8(l.st_info) >> 4) == 2;  // STB_WEAK
      if (2 * i + 2 <= versym.size()) {
        // Indexes 0 and 1 mean local and global (unversioned).
        auto index = static_cast<std::uint16_t>(versym_fields.u16(2 * i) & k_versym_index_mask);
        auto found = by_index.find(index);
        if (index >= 2 && found != by_index.end()) {
          out.version = versions[found->second].second.version;
          out.version_file = versions[found->second].second.file;
        }
      }
      m_file.undefined_symbols.push_back(std::move(out));
    }
    return {};
  }

  util::Expected<void> read_dynamic(const Section& dynamic) {
    const auto& l = *m_layout;
    auto table = KH_TRY(contents(dynamic));
    auto strings = KH_TRY(linked_strings(dynamic));
    for (std::uint64_t offset = 0; offset + l.dyn_size <= table.size(); offset += l.dyn_size) {
      auto entry = fields(std::string_view(table).substr(offset, l.dyn_size));
      auto tag = static_cast<std::int64_t>(entry.read(0, l.word));
      auto value = entry.read(l.word, l.word);
      if (tag == k_dt_null) {
        break;
      }
      if (tag == k_dt_needed) {
        m_file.needed.push_back(KH_TRY(string(strings, value)));
      } else if (tag == k_dt_soname) {
        m_file.soname = KH_TRY(string(strings, value));
      }
    }
    return {};
  }

  const ByteSource& m_source;
  const Layout* m_layout = nullptr;
  std::vector<Section> m_sections;
  ElfFile m_file;
};

}  // namespace

bool is_elf(std::string_view bytes) { return bytes.substr(0, 4) == "\x7f" "ELF"; }

util::Expected<ElfFile> read_elf(const ByteSource& source) {
  return ElfParser(source).parse();
}

std::string_view elf_architecture(const ElfFile& file) {
  switch (file.machine) {
    case 3:
      return "i686";
    case 62:
      return "x86_64";
    case 183:
      return "aarch64";
    case 21:
      return file.endianness == Endianness::little ? "ppc64le" : "ppc64";
    case 22:
      return "s390x";
    case 40:
      return "armv7l";
    case 243:
      return "riscv64";
    case 258:
      return "loongarch64";
    default:
      return "";
  }
}

}  // namespace kernelhub::abi
