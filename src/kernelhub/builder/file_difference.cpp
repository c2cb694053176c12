// SPDX-License-Identifier: Apache-2.0
// The ELF walk here reads only the section header table and the section names: enough to say
// which section two builds disagree on (.text: the code; .note.gnu.build-id: only the id;
// .rodata: a string such as a path), which is the first question when a build does not
// reproduce. It is bounds-checked on its own: a malformed file just gets the byte hint.
#include <kernelhub/builder/file_difference.hpp>

#include <algorithm>
#include <cstdint>
#include <set>
#include <system_error>

#include <fmt/format.h>

#include <kernelhub/util/file_io.hpp>

namespace kernelhub::builder {

namespace {

namespace fs = std::filesystem;

struct ElfSection {
  std::string name;
  std::uint32_t type = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

constexpr std::uint32_t k_sht_nobits = 8;

class ElfView {
 public:
  explicit ElfView(std::string_view bytes) : m_bytes(bytes) {}

  // Nullopt when `bytes` is not a well-formed ELF file as far as the section table goes.
  std::optional<std::vector<ElfSection>> sections() const {
    if (m_bytes.size() < 0x34 || m_bytes.substr(0, 4) != "\x7f" "ELF") {
      return std::nullopt;
    }
    const bool is64 = m_bytes[4] == 2;
    m_little = m_bytes[5] != 2;
    const auto shoff = is64 ? read(0x28, 8) : read(0x20, 4);
    const auto entsize = read(is64 ? 0x3a : 0x2e, 2);
    const auto count = read(is64 ? 0x3c : 0x30, 2);
    const auto strndx = read(is64 ? 0x3e : 0x32, 2);
    if (!shoff || !entsize || !count || !strndx || *count == 0 ||
        *entsize < (is64 ? 0x40U : 0x28U)) {
      return std::nullopt;
    }
    std::vector<ElfSection> sections;
    std::vector<std::uint32_t> name_offsets;
    for (std::uint64_t i = 0; i < *count; ++i) {
      const auto base = *shoff + i * *entsize;
      const auto name = read(base, 4);
      const auto type = read(base + 4, 4);
      const auto offset = is64 ? read(base + 0x18, 8) : read(base + 0x10, 4);
      const auto size = is64 ? read(base + 0x20, 8) : read(base + 0x14, 4);
      if (!name || !type || !offset || !size) {
        return std::nullopt;
      }
      name_offsets.push_back(static_cast<std::uint32_t>(*name));
      sections.push_back({{}, static_cast<std::uint32_t>(*type), *offset, *size});
    }
    if (*strndx >= sections.size()) {
      return std::nullopt;
    }
    const auto names = contents(sections[*strndx]);
    for (std::size_t i = 0; i < sections.size(); ++i) {
      if (names && name_offsets[i] < names->size()) {
        const auto rest = names->substr(name_offsets[i]);
        sections[i].name = std::string(rest.substr(0, rest.find('\0')));
      }
      if (sections[i].name.empty()) {
        sections[i].name = fmt::format("#{}", i);
      }
    }
    return sections;
  }

  // A section's bytes; empty for SHT_NOBITS; nullopt when they lie outside the file.
  std::optional<std::string_view> contents(const ElfSection& section) const {
    if (section.type == k_sht_nobits) {
      return std::string_view();
    }
    if (section.offset > m_bytes.size() || section.size > m_bytes.size() - section.offset) {
      return std::nullopt;
    }
    return m_bytes.substr(section.offset, section.size);
  }

 private:
  std::optional<std::uint64_t> read(std::uint64_t offset, unsigned width) const {
    if (offset > m_bytes.size() || width > m_bytes.size() - offset) {
      return std::nullopt;
    }
    std::uint64_t value = 0;
    for (unsigned i = 0; i < width; ++i) {
      const auto at = offset + (m_little ? width - 1 - i : i);
      const auto byte = static_cast<unsigned char>(m_bytes[at]);
      value = (value << 8) | byte;
    }
    return value;
  }

  std::string_view m_bytes;
  mutable bool m_little = true;
};

std::size_t first_mismatch(std::string_view a, std::string_view b) {
  const auto [left, right] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return static_cast<std::size_t>(left - a.begin());
}

std::string byte_hint(std::string_view published, std::string_view rebuilt) {
  if (published.size() != rebuilt.size() &&
      first_mismatch(published, rebuilt) == std::min(published.size(), rebuilt.size())) {
    return fmt::format("sizes differ ({} bytes published, {} rebuilt)", published.size(),
                       rebuilt.size());
  }
  return fmt::format("byte {} differs ({} bytes published, {} rebuilt)",
                     first_mismatch(published, rebuilt), published.size(), rebuilt.size());
}

std::optional<std::string> elf_hint(std::string_view published, std::string_view rebuilt) {
  const ElfView left(published);
  const ElfView right(rebuilt);
  const auto a = left.sections();
  const auto b = right.sections();
  if (!a || !b) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < std::min(a->size(), b->size()); ++i) {
    const auto& x = (*a)[i];
    const auto& y = (*b)[i];
    if (x.name != y.name) {
      return fmt::format("ELF section {} is {} published, {} rebuilt", i, x.name, y.name);
    }
    if (x.size != y.size) {
      return fmt::format("ELF section {} differs in size ({} bytes published, {} rebuilt)",
                         x.name, x.size, y.size);
    }
    const auto xs = left.contents(x);
    const auto ys = right.contents(y);
    if (!xs || !ys) {
      return std::nullopt;
    }
    if (*xs != *ys) {
      return fmt::format("ELF section {} differs (at byte {} of the section)", x.name,
                         first_mismatch(*xs, *ys));
    }
  }
  if (a->size() != b->size()) {
    return fmt::format("ELF section count differs ({} published, {} rebuilt)", a->size(),
                       b->size());
  }
  return fmt::format("ELF headers differ (every section is the same; file byte {})",
                     first_mismatch(published, rebuilt));
}

std::string quoted_line(std::string_view line) {
  constexpr std::size_t k_max = 120;
  std::string shown(line.substr(0, k_max));
  if (!shown.empty() && shown.back() == '\r') {
    shown.pop_back();
  }
  return fmt::format("\"{}\"{}", shown, line.size() > k_max ? "..." : "");
}

std::string text_hint(std::string_view published, std::string_view rebuilt) {
  std::size_t line = 1;
  while (true) {
    const auto a_end = published.find('\n');
    const auto b_end = rebuilt.find('\n');
    const auto a = published.substr(0, a_end);
    const auto b = rebuilt.substr(0, b_end);
    if (a != b || (a_end == std::string_view::npos) != (b_end == std::string_view::npos)) {
      if (a_end == std::string_view::npos && a.empty() && published.empty()) {
        return fmt::format("line {}: only in the rebuilt file: {}", line, quoted_line(b));
      }
      if (b_end == std::string_view::npos && b.empty() && rebuilt.empty()) {
        return fmt::format("line {}: only in the published file: {}", line, quoted_line(a));
      }
      if (a == b) {
        return fmt::format("line {}: one file ends without a newline", line);
      }
      return fmt::format("line {}: published {}, rebuilt {}", line, quoted_line(a),
                         quoted_line(b));
    }
    published.remove_prefix(std::min(published.size(), a_end + 1));
    rebuilt.remove_prefix(std::min(rebuilt.size(), b_end + 1));
    ++line;
  }
}

bool is_text(std::string_view bytes) { return bytes.find('\0') == std::string_view::npos; }

}  // namespace

util::Expected<std::vector<std::string>> variant_file_list(const fs::path& variant) {
  std::error_code ec;
  std::vector<std::string> files;
  fs::recursive_directory_iterator it(variant, ec);
  if (ec) {
    return util::fail(fmt::format("cannot list {}: {}", variant.string(), ec.message()));
  }
  for (const fs::recursive_directory_iterator end{}; it != end; it.increment(ec)) {
    if (ec) {
      return util::fail(fmt::format("cannot list {}: {}", variant.string(), ec.message()));
    }
    const auto relative = it->path().lexically_relative(variant);
    if (it->path().filename() == "__pycache__") {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec) || it->path().extension() == ".pyc") {
      continue;
    }
    const auto name = relative.generic_string();
    if (name == "metadata.json.sigstore") {
      continue;
    }
    files.push_back(name);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::optional<std::string> describe_difference(std::string_view published,
                                               std::string_view rebuilt) {
  if (published == rebuilt) {
    return std::nullopt;
  }
  if (auto hint = elf_hint(published, rebuilt)) {
    return hint;
  }
  if (is_text(published) && is_text(rebuilt)) {
    return text_hint(published, rebuilt);
  }
  return byte_hint(published, rebuilt);
}

util::Expected<std::optional<FileDifference>> first_difference(const fs::path& published,
                                                                const fs::path& rebuilt) {
  const auto left = KH_TRY(variant_file_list(published));
  const auto right = KH_TRY(variant_file_list(rebuilt));
  std::set<std::string> all(left.begin(), left.end());
  all.insert(right.begin(), right.end());
  const std::set<std::string> in_left(left.begin(), left.end());
  const std::set<std::string> in_right(right.begin(), right.end());
  for (const auto& path : all) {
    if (!in_right.contains(path)) {
      return FileDifference{path, "only in the published variant"};
    }
    if (!in_left.contains(path)) {
      return FileDifference{path, "only in the rebuilt variant"};
    }
    const auto a = KH_TRY(util::read_file(published / path));
    const auto b = KH_TRY(util::read_file(rebuilt / path));
    if (auto hint = describe_difference(a, b)) {
      return FileDifference{path, *hint};
    }
  }
  return std::optional<FileDifference>();
}

}  // namespace kernelhub::builder
