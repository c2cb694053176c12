// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/blob_verify.hpp>

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include <kernelhub/cache/blob_store.hpp>
#include <kernelhub/loader/file_state.hpp>
#include <kernelhub/util/file_io.hpp>
#include <kernelhub/verify/crypto.hpp>

namespace kernelhub::loader {

namespace fs = std::filesystem;

namespace {

bool is_hex(std::string_view text) {
  return text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// A stamp's first line: the blob's state when it last hashed right (file_state.hpp).
std::string stamp_line(const FileState& state) {
  return fmt::format("v2 {} {} {} {} {}", state.size, state.mtime_ns, state.ctime_ns, state.dev,
                     state.ino);
}

std::optional<FileState> stat_blob(const fs::path& blob) { return FileState::of(blob.native()); }

// <stamp_root>/<repo folder>/<etag>: the blob lives at <repo folder>/blobs/<etag>.
fs::path stamp_path(const fs::path& stamp_root, const fs::path& blob) {
  return stamp_root / blob.parent_path().parent_path().filename() / blob.filename();
}

// A stamp file: the blob's stat on its first line, then "<algorithm> <base64 hash>" lines for
// the hashes of its content that a digest check asked for.
struct Stamp {
  std::string stat_line;
  std::vector<std::string> hash_lines;

  static Stamp parse(std::string_view text) {
    Stamp stamp;
    std::size_t start = 0;
    while (start <= text.size()) {
      const auto end = std::min(text.find('\n', start), text.size());
      const auto line = text.substr(start, end - start);
      if (start == 0) {
        stamp.stat_line = std::string(line);
      } else if (!line.empty()) {
        stamp.hash_lines.emplace_back(line);
      }
      start = end + 1;
    }
    return stamp;
  }

  std::string render() const {
    std::string out = stat_line;
    for (const auto& line : hash_lines) {
      out += "\n" + line;
    }
    return out;
  }

  std::optional<std::string> hash(std::string_view algorithm) const {
    for (const auto& line : hash_lines) {
      if (line.size() > algorithm.size() && line.starts_with(algorithm) &&
          line[algorithm.size()] == ' ') {
        return line.substr(algorithm.size() + 1);
      }
    }
    return std::nullopt;
  }
};

// The blob a cache link points to, when it is one: blobs/<content hash>.
std::optional<fs::path> linked_blob(const fs::path& link) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(link, ec))) {
    return std::nullopt;
  }
  auto target = fs::read_symlink(link, ec);
  if (ec) {
    return std::nullopt;
  }
  if (target.is_relative()) {
    target = link.parent_path() / target;
  }
  target = target.lexically_normal();
  if (!is_content_hash(target.filename().string()) || target.parent_path().filename() != "blobs") {
    return std::nullopt;
  }
  return target;
}

std::string base64_of_hex(std::string_view hex) {
  std::string bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    const auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    bytes.push_back(static_cast<char>(nibble(hex[i]) * 16 + nibble(hex[i + 1])));
  }
  return verify::base64_encode(bytes);
}

}  // namespace

bool is_content_hash(std::string_view name) {
  return (name.size() == 40 || name.size() == 64) && is_hex(name);
}

util::Expected<std::vector<CorruptFile>> find_corrupt_files(const fs::path& variant_path,
                                                            const fs::path& stamp_root,
                                                            BlobVerifyStats* stats) {
  std::vector<CorruptFile> corrupt;
  std::error_code ec;
  fs::recursive_directory_iterator it(variant_path, fs::directory_options::none, ec);
  if (ec) {
    return util::fail(fmt::format("cannot list \"{}\": {}", variant_path.string(), ec.message()));
  }
  for (const auto& entry : it) {
    if (!entry.is_symlink(ec)) {
      continue;  // real folders are walked; plain files are not cache links and cannot be checked
    }
    auto target = fs::read_symlink(entry.path(), ec);
    if (ec) {
      continue;
    }
    if (target.is_relative()) {
      target = entry.path().parent_path() / target;
    }
    target = target.lexically_normal();
    const std::string etag = target.filename().string();
    if (!is_content_hash(etag) || target.parent_path().filename() != "blobs") {
      continue;
    }
    if (stats != nullptr) {
      ++stats->files;
    }
    // Lexically: fs::relative would follow the link into blobs/.
    CorruptFile file{entry.path().lexically_relative(variant_path).generic_string(), entry.path(),
                     target, {}};
    const auto before = stat_blob(target);
    if (!before) {
      file.reason = "its blob is missing";
      corrupt.push_back(std::move(file));
      continue;
    }
    const auto stamp_file = stamp_root.empty() ? fs::path() : stamp_path(stamp_root, target);
    if (!stamp_file.empty()) {
      if (const auto known = util::read_file(stamp_file);
          known && Stamp::parse(*known).stat_line == stamp_line(*before)) {
        continue;
      }
    }
    if (stats != nullptr) {
      ++stats->hashed;
    }
    const auto matches = cache::blob_matches_etag(target, etag);
    if (!matches || !*matches) {
      file.reason = matches ? fmt::format("its content does not hash to {}", etag)
                            : matches.error().message;
      corrupt.push_back(std::move(file));
      continue;
    }
    // Stamped only when nothing moved while we hashed: a write during the hash would
    // otherwise be covered by a stamp of the bytes before it.
    const auto after = stat_blob(target);
    if (!stamp_file.empty() && after && *after == *before) {
      // A stamp that cannot be written only costs a rehash next time.
      fs::create_directories(stamp_file.parent_path(), ec);
      (void)util::write_file_atomic(stamp_file, stamp_line(*before));
    }
  }
  return corrupt;
}

void remove_corrupt_file(const CorruptFile& file, const fs::path& stamp_root) {
  std::error_code ec;
  fs::remove(file.blob, ec);
  fs::remove(file.link, ec);
  if (!stamp_root.empty()) {
    fs::remove(stamp_path(stamp_root, file.blob), ec);
  }
}

util::Expected<std::string> stamped_file_hash(metadata::DigestAlgorithm algorithm,
                                              const fs::path& file, const fs::path& stamp_root,
                                              StampedHashStats* stats) {
  StampedHashStats ignored;
  StampedHashStats& counts = stats != nullptr ? *stats : ignored;
  ++counts.files;
  const auto blob = linked_blob(file);
  const auto before = blob ? stat_blob(*blob) : std::nullopt;
  if (!before || stamp_root.empty()) {
    ++counts.hashed;
    return metadata::hash_file(algorithm, file);
  }
  const auto stamp_file = stamp_path(stamp_root, *blob);
  const auto text = util::read_file(stamp_file);
  Stamp stamp = text ? Stamp::parse(*text) : Stamp{};
  if (stamp.stat_line != stamp_line(*before)) {
    // Not (or no longer) checked against its etag: hashed, and nothing recorded.
    ++counts.hashed;
    return metadata::hash_file(algorithm, file);
  }
  const std::string etag = blob->filename().string();
  if (algorithm == metadata::DigestAlgorithm::sha256 && etag.size() == 64) {
    return base64_of_hex(etag);  // an LFS blob is named by the sha256 of its content
  }
  const std::string name(metadata::to_string(algorithm));
  if (auto known = stamp.hash(name)) {
    return *known;
  }
  ++counts.hashed;
  auto hash = KH_TRY(metadata::hash_file(algorithm, file));
  // Recorded only when nothing moved while we hashed, as find_corrupt_files does.
  if (const auto after = stat_blob(*blob); after && *after == *before) {
    stamp.hash_lines.push_back(name + " " + hash);
    (void)util::write_file_atomic(stamp_file, stamp.render());
  }
  return hash;
}

}  // namespace kernelhub::loader
