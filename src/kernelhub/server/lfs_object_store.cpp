// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/lfs_object_store.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>

#include <fmt/format.h>
#include <openssl/evp.h>

#include <kernelhub/util/unique_fd.hpp>

namespace kernelhub::server {

namespace fs = std::filesystem;

namespace {

// Big enough that the hash, not the system calls, sets the pace; small enough to be nothing
// beside a 2 GB object.
constexpr std::size_t k_block_bytes = std::size_t{1} << 20;

tl::unexpected<HubError> io_failure(std::string_view what, const fs::path& path) {
  return hub_fail(500, "", fmt::format("cannot {} LFS file \"{}\": {}", what,
                                       path.filename().string(), std::strerror(errno)));
}

struct DigestDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
using DigestContext = std::unique_ptr<EVP_MD_CTX, DigestDeleter>;

DigestContext new_sha256() {
  DigestContext ctx(EVP_MD_CTX_new());
  if (ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    ctx.reset();
  }
  return ctx;
}

std::string finish_hex(EVP_MD_CTX* ctx) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx, digest.data(), &length);
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    hex += fmt::format("{:02x}", digest[i]);
  }
  return hex;
}

// Reads `fd` to its end in blocks, hashing each and handing it to `sink` (may be null).
template <typename Sink>
HubExpected<std::uint64_t> pump(int fd, const fs::path& path, EVP_MD_CTX* ctx,
                                std::vector<char>& buffer, Sink&& sink) {
  std::uint64_t total = 0;
  while (true) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return io_failure("read", path);
    }
    if (n == 0) {
      return total;
    }
    EVP_DigestUpdate(ctx, buffer.data(), static_cast<std::size_t>(n));
    KH_HUB_TRY(sink(buffer.data(), static_cast<std::size_t>(n)));
    total += static_cast<std::uint64_t>(n);
  }
}

HubExpected<void> write_all(int fd, const fs::path& path, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return io_failure("write", path);
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return {};
}

HubExpected<void> check_digest(const FileDigest& got, const LfsPointer& expected) {
  if (got.size != expected.size) {
    return bad_request(fmt::format("LFS object {} has {} bytes, not the {} announced",
                                   expected.oid, got.size, expected.size));
  }
  if (got.sha256 != expected.oid) {
    return bad_request(fmt::format("LFS object content hashes to sha256 {}, not the oid {}",
                                   got.sha256, expected.oid));
  }
  return {};
}

}  // namespace

HubExpected<FileDigest> sha256_of_file(const fs::path& path) {
  const util::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    return io_failure("open", path);
  }
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  const DigestContext ctx = new_sha256();
  if (!ctx) {
    return hub_fail(500, "", "cannot start a sha256 digest");
  }
  std::vector<char> buffer(k_block_bytes);
  const std::uint64_t size = KH_HUB_TRY(
      pump(fd.get(), path, ctx.get(), buffer, [](const char*, std::size_t) -> HubExpected<void> {
        return {};
      }));
  return FileDigest{finish_hex(ctx.get()), size};
}

std::string part_etag(const fs::path& part) {
  struct stat info {};
  if (::stat(part.c_str(), &info) != 0) {
    return {};
  }
  return fmt::format("\"{:x}-{:x}-{:x}\"", static_cast<std::uint64_t>(info.st_ino),
                     static_cast<std::uint64_t>(info.st_mtim.tv_sec) * 1'000'000'000 +
                         static_cast<std::uint64_t>(info.st_mtim.tv_nsec),
                     static_cast<std::uint64_t>(info.st_size));
}

LfsObjectStore::LfsObjectStore(fs::path repo_dir) : m_lfs_dir(std::move(repo_dir) / "lfs") {}

fs::path LfsObjectStore::object_path(const std::string& oid) const {
  return m_lfs_dir / "objects" / oid.substr(0, 2) / oid.substr(2, 2) / oid;
}

std::optional<std::uint64_t> LfsObjectStore::stored_size(const std::string& oid) const {
  if (!is_sha256_hex(oid)) {
    return std::nullopt;
  }
  struct stat info {};
  if (::stat(object_path(oid).c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(info.st_size);
}

HubExpected<fs::path> LfsObjectStore::temporary_file() const {
  std::error_code ec;
  fs::create_directories(m_lfs_dir / "tmp", ec);
  std::string pattern = (m_lfs_dir / "tmp" / "upload-XXXXXX").string();
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) {
    return io_failure("create a temporary", pattern);
  }
  ::close(fd);
  return fs::path(pattern);
}

HubExpected<void> LfsObjectStore::move_into_place(const fs::path& temporary,
                                                  const std::string& oid) const {
  const fs::path target = object_path(oid);
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) {
    fs::remove(temporary, ec);
    return hub_fail(500, "", fmt::format("cannot create the LFS folder for {}: {}", oid,
                                         ec.message()));
  }
  ::chmod(temporary.c_str(), 0644);
  // On disk before it has a name a commit can point at.
  if (const int fd = ::open(temporary.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    const auto failure = io_failure("store", target);
    fs::remove(temporary, ec);
    return failure;
  }
  return {};
}

HubExpected<void> LfsObjectStore::install(const fs::path& source, const LfsPointer& expected) {
  if (!is_sha256_hex(expected.oid)) {
    return bad_request(fmt::format("invalid LFS oid \"{}\": expected 64 lower-case hex digits",
                                   expected.oid));
  }
  const FileDigest digest = KH_HUB_TRY(sha256_of_file(source));
  KH_HUB_TRY(check_digest(digest, expected));
  if (stored_size(expected.oid) == expected.size) {
    return {};
  }
  // A second name for the checked file: the transport unlinks its own name when the request
  // ends, and a rename would let a later spool file take that name under it.
  const fs::path temporary = KH_HUB_TRY(temporary_file());
  std::error_code ec;
  fs::remove(temporary, ec);
  if (::link(source.c_str(), temporary.c_str()) != 0) {
    fs::copy_file(source, temporary, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      fs::remove(temporary, ec);
      return hub_fail(500, "", fmt::format("cannot store LFS object {}: {}", expected.oid,
                                           ec.message()));
    }
  }
  return move_into_place(temporary, expected.oid);
}

fs::path LfsObjectStore::part_path(const std::string& oid, std::uint64_t number) const {
  return m_lfs_dir / "incomplete" / oid / std::to_string(number);
}

HubExpected<std::string> LfsObjectStore::store_part(const fs::path& source, const std::string& oid,
                                                    std::uint64_t number,
                                                    std::uint64_t expected_size) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(source, ec);
  if (ec || size != expected_size) {
    return bad_request(fmt::format("part {} of LFS object {} has {} bytes, not the {} expected",
                                   number, oid, ec ? 0 : size, expected_size));
  }
  const fs::path target = part_path(oid, number);
  fs::create_directories(target.parent_path(), ec);
  const fs::path temporary = KH_HUB_TRY(temporary_file());
  fs::remove(temporary, ec);
  if (::link(source.c_str(), temporary.c_str()) != 0) {
    fs::copy_file(source, temporary, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      fs::remove(temporary, ec);
      return hub_fail(500, "", fmt::format("cannot store part {} of LFS object {}: {}", number,
                                           oid, ec.message()));
    }
  }
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    const auto failure = io_failure("store part of", target);
    fs::remove(temporary, ec);
    return failure;
  }
  return part_etag(target);
}

HubExpected<void> LfsObjectStore::complete(const LfsPointer& expected, std::uint64_t chunk_size,
                                           const std::vector<Part>& parts) {
  if (!is_sha256_hex(expected.oid) || chunk_size == 0) {
    return bad_request("invalid multipart completion: a sha256 oid and a chunk size are needed");
  }
  if (stored_size(expected.oid) == expected.size) {
    return {};
  }
  const std::uint64_t count = (expected.size + chunk_size - 1) / chunk_size;
  if (parts.size() != count) {
    return bad_request(fmt::format("LFS object {} needs {} parts, the completion lists {}",
                                   expected.oid, count, parts.size()));
  }
  for (std::uint64_t i = 0; i < count; ++i) {
    const Part& part = parts[i];
    if (part.number != i + 1) {
      return bad_request(fmt::format("multipart completion: part {} is listed as part {}", i + 1,
                                     part.number));
    }
    const std::string etag = part_etag(part_path(expected.oid, part.number));
    if (etag.empty()) {
      return bad_request(fmt::format("part {} of LFS object {} was never uploaded", part.number,
                                     expected.oid));
    }
    // Quotes are part of an ETag, but clients differ in keeping them.
    const auto bare = [](std::string_view text) {
      while (!text.empty() && text.front() == '"') text.remove_prefix(1);
      while (!text.empty() && text.back() == '"') text.remove_suffix(1);
      return text;
    };
    if (bare(etag) != bare(part.etag)) {
      return bad_request(fmt::format("part {} of LFS object {} has ETag {}, not {}: it was "
                                     "uploaded again since",
                                     part.number, expected.oid, etag, part.etag));
    }
  }
  const fs::path temporary = KH_HUB_TRY(temporary_file());
  std::error_code ec;
  auto joined = [&]() -> HubExpected<FileDigest> {
    const util::UniqueFd out(::open(temporary.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
    if (out.get() < 0) {
      return io_failure("open", temporary);
    }
    const DigestContext ctx = new_sha256();
    if (!ctx) {
      return hub_fail(500, "", "cannot start a sha256 digest");
    }
    std::vector<char> buffer(k_block_bytes);
    std::uint64_t total = 0;
    for (const Part& part : parts) {
      const fs::path path = part_path(expected.oid, part.number);
      const util::UniqueFd in(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
      if (in.get() < 0) {
        return io_failure("open", path);
      }
      ::posix_fadvise(in.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
      total += KH_HUB_TRY(pump(in.get(), path, ctx.get(), buffer,
                               [&](const char* data, std::size_t size) {
                                 return write_all(out.get(), temporary, data, size);
                               }));
    }
    return FileDigest{finish_hex(ctx.get()), total};
  }();
  if (!joined) {
    fs::remove(temporary, ec);
    return tl::unexpected(joined.error());
  }
  if (auto checked = check_digest(*joined, expected); !checked) {
    fs::remove(temporary, ec);
    return checked;
  }
  KH_HUB_TRY(move_into_place(temporary, expected.oid));
  fs::remove_all(m_lfs_dir / "incomplete" / expected.oid, ec);
  return {};
}

void LfsObjectStore::remove_stale(std::chrono::seconds age) const {
  std::error_code ec;
  const auto cutoff = fs::file_time_type::clock::now() - age;
  for (const char* folder : {"tmp", "incomplete"}) {
    for (fs::directory_iterator it(m_lfs_dir / folder, ec), end; !ec && it != end;
         it.increment(ec)) {
      std::error_code stat_ec;
      if (fs::last_write_time(it->path(), stat_ec) < cutoff && !stat_ec) {
        fs::remove_all(it->path(), stat_ec);
      }
    }
  }
}

}  // namespace kernelhub::server
