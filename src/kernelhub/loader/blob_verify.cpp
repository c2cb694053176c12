// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/blob_verify.hpp>

#include <sys/stat.h>

#include <fmt/format.h>

#include <kernelhub/cache/blob_store.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::loader {

namespace fs = std::filesystem;

namespace {

bool is_hex(std::string_view text) {
  return text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

bool is_content_hash(std::string_view name) {
  return (name.size() == 40 || name.size() == 64) && is_hex(name);
}

// What a stamp records of a blob. ctime is the one field a user cannot set back: rewriting the
// bytes in place and restoring mtime with `touch -d` or utime(2) still moves ctime to now, as
// does any chmod, rename or hard link. dev + ino tell a replaced or restored file apart.
struct BlobStat {
  long long size = 0;
  long long mtime_ns = 0;
  long long ctime_ns = 0;
  unsigned long long dev = 0;
  unsigned long long ino = 0;

  std::string render() const {
    return fmt::format("v2 {} {} {} {} {}", size, mtime_ns, ctime_ns, dev, ino);
  }
  friend bool operator==(const BlobStat&, const BlobStat&) = default;
};

long long nanoseconds(const timespec& time) {
  return static_cast<long long>(time.tv_sec) * 1000000000LL + time.tv_nsec;
}

std::optional<BlobStat> stat_blob(const fs::path& blob) {
  struct stat info {};
  if (::stat(blob.c_str(), &info) != 0) {
    return std::nullopt;
  }
  return BlobStat{static_cast<long long>(info.st_size), nanoseconds(info.st_mtim),
                  nanoseconds(info.st_ctim), static_cast<unsigned long long>(info.st_dev),
                  static_cast<unsigned long long>(info.st_ino)};
}

// <stamp_root>/<repo folder>/<etag>: the blob lives at <repo folder>/blobs/<etag>.
fs::path stamp_path(const fs::path& stamp_root, const fs::path& blob) {
  return stamp_root / blob.parent_path().parent_path().filename() / blob.filename();
}

}  // namespace

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
      if (const auto known = util::read_file(stamp_file); known && *known == before->render()) {
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
      (void)util::write_file_atomic(stamp_file, before->render());
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

}  // namespace kernelhub::loader
