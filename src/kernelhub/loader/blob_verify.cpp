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

// "size mtime_ns inode" of the blob, or nullopt when it cannot be stat'ed.
std::optional<std::string> blob_stamp(const fs::path& blob) {
  struct stat info {};
  if (::stat(blob.c_str(), &info) != 0) {
    return std::nullopt;
  }
  const long long mtime_ns =
      static_cast<long long>(info.st_mtim.tv_sec) * 1000000000LL + info.st_mtim.tv_nsec;
  return fmt::format("{} {} {}", static_cast<long long>(info.st_size), mtime_ns,
                     static_cast<unsigned long long>(info.st_ino));
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
    const auto stamp = blob_stamp(target);
    if (!stamp) {
      file.reason = "its blob is missing";
      corrupt.push_back(std::move(file));
      continue;
    }
    const auto stamp_file = stamp_root.empty() ? fs::path() : stamp_path(stamp_root, target);
    if (!stamp_file.empty()) {
      if (const auto known = util::read_file(stamp_file); known && *known == *stamp) {
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
    if (!stamp_file.empty()) {
      // A stamp that cannot be written only costs a rehash next time.
      fs::create_directories(stamp_file.parent_path(), ec);
      (void)util::write_file_atomic(stamp_file, *stamp);
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
