// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/abi/byte_source.hpp>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <kernelhub/util/file_io.hpp>

namespace kernelhub::abi {

util::Expected<std::string> ByteSource::read(std::uint64_t offset, std::uint64_t length) const {
  // Written so that no sum can overflow: offset and length come from the file itself.
  if (offset > size() || length > size() - offset) {
    return util::fail(fmt::format("{} bytes at offset {} lie outside the file ({} bytes)", length,
                                  offset, size()));
  }
  return read_checked(offset, length);
}

util::Expected<std::string> MemoryByteSource::read_checked(std::uint64_t offset,
                                                           std::uint64_t length) const {
  return std::string(m_bytes.substr(offset, length));
}

util::Expected<FileByteSource> FileByteSource::open(const std::filesystem::path& path) {
  // O_NONBLOCK: opening a FIFO without a writer would otherwise wait for one for ever; the
  // check below then refuses it. Reads of a regular file ignore the flag.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return util::fail(fmt::format("cannot open \"{}\": {}", path.string(), std::strerror(errno)));
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return util::fail(fmt::format("\"{}\" is {}, not a regular file", path.string(),
                                  util::describe_file_type(info.st_mode)));
  }
  return FileByteSource(fd, static_cast<std::uint64_t>(info.st_size), path.string());
}

FileByteSource::FileByteSource(FileByteSource&& other) noexcept
    : m_fd(other.m_fd), m_size(other.m_size), m_path(std::move(other.m_path)) {
  other.m_fd = -1;
}

FileByteSource::~FileByteSource() {
  if (m_fd >= 0) {
    ::close(m_fd);
  }
}

util::Expected<std::string> FileByteSource::read_checked(std::uint64_t offset,
                                                         std::uint64_t length) const {
  std::string buffer(length, '\0');
  std::uint64_t done = 0;
  while (done < length) {
    auto got = ::pread(m_fd, buffer.data() + done, length - done,
                       static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got <= 0) {
      return util::fail(fmt::format("cannot read \"{}\": {}", m_path,
                                    got == 0 ? "unexpected end of file" : std::strerror(errno)));
    }
    done += static_cast<std::uint64_t>(got);
  }
  return buffer;
}

}  // namespace kernelhub::abi
