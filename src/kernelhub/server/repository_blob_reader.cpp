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

}  // namespace

HubExpected<std::shared_ptr<BlobReader>> open_loose_blob(git_repository* repo,
                                                         const std::string& oid) {
  if (oid.size() != GIT_OID_HEXSZ) {
    return std::shared_ptr<BlobReader>();
  }
  const std::filesystem::path path = std::filesystem::path(git_repository_path(repo)) /
                                     "objects" / oid.substr(0, 2) / oid.substr(2);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return std::shared_ptr<BlobReader>();  // packed, or gone: read through libgit2
  }
  auto reader = std::make_shared<LooseBlobReader>(fd, oid);
  KH_HUB_TRY(reader->start());
  return std::shared_ptr<BlobReader>(std::move(reader));
}

}  // namespace kernelhub::server
