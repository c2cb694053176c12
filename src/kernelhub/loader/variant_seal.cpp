// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/variant_seal.hpp>

#include <charconv>
#include <chrono>
#include <system_error>

#include <fmt/format.h>

#include <kernelhub/util/file_io.hpp>

namespace kernelhub::loader {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_header = "kernelhub-variant-seal 1";

// The entry's state now, links followed: what an import of the path reads.
std::optional<SealedEntry> stat_entry(const std::string& path, std::string relative_path) {
  const auto state = FileState::of(path);
  if (!state) {
    return std::nullopt;
  }
  return SealedEntry{*state, std::move(relative_path)};
}

std::string entry_path(const fs::path& variant_path, std::string_view relative_path) {
  if (relative_path == ".") {
    return variant_path.native();
  }
  std::string out = variant_path.native();
  out += '/';
  out += relative_path;
  return out;
}

// What the digest leaves out (metadata::hash_variant_files): bytecode.
bool left_out_as_bytecode(const fs::path& path) {
  return path.filename() == "__pycache__" || path.extension() == ".pyc";
}

template <typename Number>
bool take_number(std::string_view& text, Number& out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (error != std::errc() || end == text.data() + text.size() || *end != ' ') {
    return false;
  }
  text.remove_prefix(static_cast<std::size_t>(end - text.data()) + 1);
  return true;
}

std::optional<SealedEntry> parse_line(std::string_view line) {
  if (line.size() < 2 || (line[0] != 'd' && line[0] != 'f') || line[1] != ' ') {
    return std::nullopt;
  }
  SealedEntry entry;
  entry.folder = line[0] == 'd';
  line.remove_prefix(2);
  if (!take_number(line, entry.size) || !take_number(line, entry.mtime_ns) ||
      !take_number(line, entry.ctime_ns) || !take_number(line, entry.dev) ||
      !take_number(line, entry.ino) || line.empty()) {
    return std::nullopt;
  }
  entry.relative_path = std::string(line);
  return entry;
}

}  // namespace

std::optional<VariantSeal> VariantSeal::take(const fs::path& variant_path) {
  VariantSeal seal;
  auto root = stat_entry(variant_path.native(), ".");
  if (!root || !root->folder) {
    return std::nullopt;
  }
  seal.entries.push_back(std::move(*root));
  std::error_code ec;
  fs::recursive_directory_iterator it(variant_path, fs::directory_options::none, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& path = it->path();
    if (left_out_as_bytecode(path)) {
      if (it->is_directory(ec)) {
        it.disable_recursion_pending();
      }
      continue;
    }
    const bool link = it->is_symlink(ec);
    auto entry = stat_entry(path.native(), path.lexically_relative(variant_path).generic_string());
    if (!entry || entry->relative_path.find('\n') != std::string::npos ||
        (link && entry->folder)) {
      return std::nullopt;
    }
    seal.entries.push_back(std::move(*entry));
  }
  if (ec) {
    return std::nullopt;
  }
  return seal;
}

bool VariantSeal::settled(long long now_ns, int settle_seconds) const {
  const long long limit = now_ns - static_cast<long long>(settle_seconds) * 1000000000LL;
  for (const auto& entry : entries) {
    if (entry.ctime_ns >= limit || entry.mtime_ns >= limit) {
      return false;
    }
  }
  return true;
}

std::string VariantSeal::render() const {
  std::string out(k_header);
  out += '\n';
  for (const auto& entry : entries) {
    out += fmt::format("{} {} {} {} {} {} {}\n", entry.folder ? 'd' : 'f', entry.size,
                       entry.mtime_ns, entry.ctime_ns, entry.dev, entry.ino, entry.relative_path);
  }
  return out;
}

std::optional<VariantSeal> VariantSeal::parse(std::string_view text) {
  if (!text.starts_with(k_header) || text.size() <= k_header.size() ||
      text[k_header.size()] != '\n') {
    return std::nullopt;
  }
  text.remove_prefix(k_header.size() + 1);
  VariantSeal seal;
  while (!text.empty()) {
    const auto end = text.find('\n');
    if (end == std::string_view::npos) {
      return std::nullopt;  // a seal cut short by a crash is no seal
    }
    auto entry = parse_line(text.substr(0, end));
    if (!entry) {
      return std::nullopt;
    }
    seal.entries.push_back(std::move(*entry));
    text.remove_prefix(end + 1);
  }
  if (seal.entries.empty() || seal.entries.front().relative_path != "." ||
      !seal.entries.front().folder) {
    return std::nullopt;
  }
  return seal;
}

fs::path seal_path(const fs::path& seal_root, const fs::path& repo_folder, std::string_view commit,
                   std::string_view variant) {
  return seal_root / repo_folder.filename() / std::string(commit) / std::string(variant);
}

bool seal_holds(const fs::path& variant_path, const fs::path& seal_file) {
  const auto text = util::read_file(seal_file);
  if (!text) {
    return false;
  }
  const auto seal = VariantSeal::parse(*text);
  if (!seal) {
    return false;
  }
  for (const auto& entry : seal->entries) {
    const auto now = stat_entry(entry_path(variant_path, entry.relative_path), entry.relative_path);
    if (!now || !(*now == entry)) {
      return false;
    }
  }
  return true;
}

void write_seal(const fs::path& variant_path, const fs::path& seal_file, const VariantSeal& before,
                int settle_seconds) {
  const long long now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  if (!before.settled(now, settle_seconds)) {
    return;
  }
  const auto after = VariantSeal::take(variant_path);
  if (!after || !(*after == before)) {
    return;
  }
  std::error_code ec;
  fs::create_directories(seal_file.parent_path(), ec);
  (void)util::write_file_atomic(seal_file, before.render());
}

void remove_seal(const fs::path& seal_file) {
  std::error_code ec;
  fs::remove(seal_file, ec);
}

}  // namespace kernelhub::loader
