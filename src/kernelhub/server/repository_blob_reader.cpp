// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/repository_blob_reader.hpp>

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include <kernelhub/server/git_handles.hpp>

namespace kernelhub::server {

namespace {

constexpr std::size_t k_input_block = std::size_t{64} << 10;
// "blob <decimal size>\0": 5 + 20 digits + 1.
constexpr std::size_t k_max_header = 32;

tl::unexpected<HubError> damaged(const std::string& oid, std::string_view why) {
  return hub_fail(500, "", fmt::format("cannot read blob {}: {}", oid, why));
}

// A zlib stream of a blob read from `fd`'s current position: a loose object (header first)
// or a pack entry's data (its size known from the entry header).
class LooseBlobReader final : public BlobReader {
 public:
  LooseBlobReader(int fd, std::string oid) : m_fd(fd), m_oid(std::move(oid)) {}
  LooseBlobReader(const LooseBlobReader&) = delete;
  LooseBlobReader& operator=(const LooseBlobReader&) = delete;
  ~LooseBlobReader() override {
    if (m_started) {
      inflateEnd(&m_zlib);
    }
    ::close(m_fd);
  }

  // Inflates the object's header and checks it names a blob.
  HubExpected<void> start() {
    if (inflateInit(&m_zlib) != Z_OK) {
      return damaged(m_oid, "zlib could not start");
    }
    m_started = true;
    std::array<char, k_max_header> header{};
    std::size_t got = 0;
    // One byte at a time up to the NUL, so no content byte is taken with the header.
    while (got < header.size()) {
      const auto n = KH_HUB_TRY(inflate_into(&header[got], 1));
      if (n == 0) {
        return damaged(m_oid, "the object ends inside its header");
      }
      if (header[got++] == '\0') {
        break;
      }
    }
    const std::string_view text(header.data(), got);
    if (!text.starts_with("blob ") || text.back() != '\0') {
      return damaged(m_oid, "not a blob object");
    }
    const std::string_view digits = text.substr(5, text.size() - 6);
    const auto [end, error] =
        std::from_chars(digits.data(), digits.data() + digits.size(), m_size);
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
      return damaged(m_oid, "its header has no valid size");
    }
    return {};
  }

  // For a pack entry: no object header inside the stream, the size given.
  HubExpected<void> start_packed(std::uint64_t size) {
    if (inflateInit(&m_zlib) != Z_OK) {
      return damaged(m_oid, "zlib could not start");
    }
    m_started = true;
    m_size = size;
    return {};
  }

  std::uint64_t size() const override { return m_size; }

  HubExpected<std::size_t> read(char* out, std::size_t capacity) override {
    const std::uint64_t left = m_size - m_read;
    if (left == 0) {
      return 0;
    }
    const std::size_t wanted = static_cast<std::size_t>(std::min<std::uint64_t>(capacity, left));
    const std::size_t n = KH_HUB_TRY(inflate_into(out, wanted));
    if (n == 0) {
      return damaged(m_oid, fmt::format("it ends after {} of {} bytes", m_read, m_size));
    }
    m_read += n;
    return n;
  }

 private:
  // Inflates up to `capacity` bytes, reading more of the file as zlib needs; 0 at the end of
  // the stream.
  HubExpected<std::size_t> inflate_into(char* out, std::size_t capacity) {
    m_zlib.next_out = reinterpret_cast<Bytef*>(out);
    m_zlib.avail_out = static_cast<uInt>(capacity);
    while (m_zlib.avail_out > 0 && !m_ended) {
      if (m_zlib.avail_in == 0) {
        const ssize_t n = ::read(m_fd, m_input.data(), m_input.size());
        if (n < 0) {
          if (errno == EINTR) {
            continue;
          }
          return damaged(m_oid, std::strerror(errno));
        }
        if (n == 0) {
          return damaged(m_oid, "the compressed data ends early");
        }
        m_zlib.next_in = reinterpret_cast<Bytef*>(m_input.data());
        m_zlib.avail_in = static_cast<uInt>(n);
      }
      const int status = inflate(&m_zlib, Z_NO_FLUSH);
      if (status == Z_STREAM_END) {
        m_ended = true;
      } else if (status != Z_OK) {
        return damaged(m_oid, m_zlib.msg != nullptr ? m_zlib.msg : "zlib error");
      }
    }
    return capacity - m_zlib.avail_out;
  }

  int m_fd;
  std::string m_oid;
  z_stream m_zlib{};
  bool m_started = false;
  bool m_ended = false;
  std::uint64_t m_size = 0;
  std::uint64_t m_read = 0;
  std::array<char, k_input_block> m_input{};
};

bool read_exactly(int fd, void* out, std::size_t size, std::uint64_t offset) {
  auto* bytes = static_cast<char*>(out);
  while (size > 0) {
    const ssize_t n = ::pread(fd, bytes, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    bytes += n;
    size -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
  return true;
}

std::uint32_t big_endian_32(const unsigned char* bytes) {
  return (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) |
         (std::uint32_t{bytes[2]} << 8) | std::uint32_t{bytes[3]};
}

// Where `oid` is in the pack a version-2 `.idx` file indexes (git's
// Documentation/gitformat-pack.txt): the fan-out table narrows the sorted sha1 table, a binary
// search finds the entry, and its offset is 31 bits or an index into the 64-bit table.
std::optional<std::uint64_t> pack_offset(const std::filesystem::path& idx,
                                         const unsigned char (&raw)[GIT_OID_RAWSZ]) {
  const int fd = ::open(idx.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return std::nullopt;
  }
  const auto close_fd = std::unique_ptr<int, void (*)(int*)>(new int(fd), [](int* p) {
    ::close(*p);
    delete p;
  });
  unsigned char header[8 + 256 * 4];
  if (!read_exactly(fd, header, sizeof header, 0) ||
      std::memcmp(header, "\377tOc\0\0\0\2", 8) != 0) {
    return std::nullopt;
  }
  const auto fanout = [&](int i) { return i < 0 ? 0u : big_endian_32(header + 8 + i * 4); };
  const std::uint32_t count = fanout(255);
  std::uint32_t low = fanout(raw[0] - 1);
  std::uint32_t high = fanout(raw[0]);
  constexpr std::uint64_t k_names = 8 + 256 * 4;
  while (low < high) {
    const std::uint32_t middle = low + (high - low) / 2;
    unsigned char name[GIT_OID_RAWSZ];
    if (!read_exactly(fd, name, sizeof name, k_names + std::uint64_t{middle} * GIT_OID_RAWSZ)) {
      return std::nullopt;
    }
    const int order = std::memcmp(name, raw, GIT_OID_RAWSZ);
    if (order == 0) {
      const std::uint64_t offsets = k_names + std::uint64_t{count} * (GIT_OID_RAWSZ + 4);
      unsigned char small[4];
      if (!read_exactly(fd, small, 4, offsets + std::uint64_t{middle} * 4)) {
        return std::nullopt;
      }
      const std::uint32_t value = big_endian_32(small);
      if ((value & 0x80000000u) == 0) {
        return value;
      }
      unsigned char large[8];
      if (!read_exactly(fd, large, 8,
                        offsets + std::uint64_t{count} * 4 + std::uint64_t{value & 0x7fffffffu} * 8)) {
        return std::nullopt;
      }
      return (std::uint64_t{big_endian_32(large)} << 32) | big_endian_32(large + 4);
    }
    if (order < 0) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return std::nullopt;
}

// A blob stored whole in a pack (not as a delta): its entry header, then its zlib stream. A
// delta needs its base rebuilt first, which libgit2 does (whole, in memory).
HubExpected<std::shared_ptr<BlobReader>> open_packed_blob(git_repository* repo,
                                                          const std::string& oid) {
  git_oid parsed;
  if (git_oid_fromstr(&parsed, oid.c_str()) != 0) {
    return std::shared_ptr<BlobReader>();
  }
  const std::filesystem::path packs =
      std::filesystem::path(git_repository_path(repo)) / "objects" / "pack";
  std::error_code ec;
  for (std::filesystem::directory_iterator it(packs, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->path().extension() != ".idx") {
      continue;
    }
    const auto offset = pack_offset(it->path(), parsed.id);
    if (!offset) {
      continue;
    }
    std::filesystem::path pack = it->path();
    pack.replace_extension(".pack");
    const int fd = ::open(pack.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return std::shared_ptr<BlobReader>();
    }
    auto reader = std::make_shared<LooseBlobReader>(fd, oid);
    // Type in bits 4-6 of the first byte, the size in its low 4 bits and 7 more bits of each
    // following byte while the top bit is set.
    unsigned char byte = 0;
    std::uint64_t at = *offset;
    if (!read_exactly(fd, &byte, 1, at++)) {
      return damaged(oid, "its pack entry cannot be read");
    }
    const int type = (byte >> 4) & 7;
    std::uint64_t size = byte & 15;
    for (int shift = 4; (byte & 0x80) != 0; shift += 7) {
      if (shift > 57 || !read_exactly(fd, &byte, 1, at++)) {
        return damaged(oid, "its pack entry header is malformed");
      }
      size |= std::uint64_t{byte & 0x7fu} << shift;
    }
    if (type != GIT_OBJECT_BLOB) {
      return std::shared_ptr<BlobReader>();  // a delta
    }
    if (::lseek(fd, static_cast<off_t>(at), SEEK_SET) < 0) {
      return damaged(oid, std::strerror(errno));
    }
    KH_HUB_TRY(reader->start_packed(size));
    return std::shared_ptr<BlobReader>(std::move(reader));
  }
  return std::shared_ptr<BlobReader>();
}

}  // namespace

HubExpected<std::shared_ptr<BlobReader>> open_streamed_blob(git_repository* repo,
                                                            const std::string& oid) {
  if (oid.size() != GIT_OID_HEXSZ) {
    return std::shared_ptr<BlobReader>();
  }
  const std::filesystem::path path = std::filesystem::path(git_repository_path(repo)) /
                                     "objects" / oid.substr(0, 2) / oid.substr(2);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return open_packed_blob(repo, oid);
  }
  auto reader = std::make_shared<LooseBlobReader>(fd, oid);
  KH_HUB_TRY(reader->start());
  return std::shared_ptr<BlobReader>(std::move(reader));
}

}  // namespace kernelhub::server
