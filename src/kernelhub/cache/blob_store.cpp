// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cache/blob_store.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <kernelhub/cache/file_lock.hpp>
#include <kernelhub/hub/content_hash.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::cache {

namespace fs = std::filesystem;

namespace {

bool is_lower_hex(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// Blob files get the mode the umask gives new files, not mkstemp's 0600 (Python does the same).
mode_t blob_mode() {
  static const mode_t mode = static_cast<mode_t>(0666 & ~util::current_umask());
  return mode;
}

util::Expected<std::uint64_t> size_of(const fs::path& file) {
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  if (ec) {
    return util::fail(fmt::format("cannot read \"{}\": {}", file.string(), ec.message()));
  }
  return size;
}

util::Expected<void> touch(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return util::fail(fmt::format("cannot create \"{}\": {}", file.string(), std::strerror(errno)));
  }
  ::close(fd);
  return {};
}

}  // namespace

util::Expected<bool> blob_matches_etag(const fs::path& file, std::string_view etag) {
  if (!is_lower_hex(etag) || (etag.size() != 40 && etag.size() != 64)) {
    return true;
  }
  const auto digest = KH_TRY(etag.size() == 40 ? hub::git_blob_sha1_of_file(file)
                                               : hub::sha256_of_file(file));
  return digest == etag;
}

util::Expected<BlobOutcome> ensure_blob(const RepoCache& repo, const BlobRequest& request,
                                        const BlobFetcher& fetch) {
  if (!is_safe_etag(request.etag)) {
    return util::fail(fmt::format("refusing the blob name \"{}\"", request.etag));
  }
  const auto blob = repo.blob_path(request.etag);
  if (repo.has_blob(request.etag)) {
    return BlobOutcome::cached;
  }
  auto lock = KH_TRY(FileLock::acquire(repo.lock_path(request.etag)));
  // Whoever held the lock before us may have finished this blob.
  if (repo.has_blob(request.etag)) {
    return BlobOutcome::cached;
  }
  const auto partial = repo.partial_blob_path(request.etag);
  std::error_code ec;
  fs::create_directories(partial.parent_path(), ec);
  if (ec) {
    return util::fail(fmt::format("cannot create \"{}\": {}", partial.parent_path().string(), ec.message()));
  }
  // A leftover longer than the blob cannot be resumed.
  if (fs::exists(partial, ec) && KH_TRY(size_of(partial)) > request.size) {
    fs::remove(partial, ec);
  }
  if (auto done = touch(partial); !done) {
    return tl::unexpected(done.error());
  }
  if (auto done = fetch(partial); !done) {
    return tl::unexpected(done.error());
  }
  const auto got = KH_TRY(size_of(partial));
  if (got != request.size) {
    if (got > request.size) {
      fs::remove(partial, ec);
    }
    return util::fail(fmt::format("downloaded {} bytes of blob \"{}\", expected {}", got,
                                  request.etag, request.size));
  }
  if (request.verify_content && !KH_TRY(blob_matches_etag(partial, request.etag))) {
    fs::remove(partial, ec);
    return util::fail(fmt::format("downloaded bytes do not match the etag \"{}\"", request.etag));
  }
  if (::chmod(partial.c_str(), blob_mode()) != 0 || ::rename(partial.c_str(), blob.c_str()) != 0) {
    return util::fail(fmt::format("cannot store blob \"{}\": {}", blob.string(), std::strerror(errno)));
  }
  return BlobOutcome::downloaded;
}

}  // namespace kernelhub::cache
