// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/util/file_io.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace kernelhub::util {

namespace fs = std::filesystem;

std::string describe_file_type(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a directory";
    case S_IFIFO:
      return "a FIFO (named pipe)";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFSOCK:
      return "a socket";
    default:
      return "not a regular file";
  }
}

Expected<std::string> read_file(const fs::path& path) {
  // O_NONBLOCK: opening a FIFO without a writer would otherwise wait for one for ever. It is
  // a no-op for the regular files that get past the check below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return fail(fmt::format("cannot read \"{}\": {}", path.string(), std::strerror(errno)));
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    const int saved = errno;
    const bool stat_failed = info.st_mode == 0;
    ::close(fd);
    return fail(fmt::format("cannot read \"{}\": {}", path.string(),
                            stat_failed ? std::string(std::strerror(saved))
                                        : "it is " + describe_file_type(info.st_mode) +
                                              ", not a regular file"));
  }
  std::string content;
  char buffer[64 * 1024];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      const int saved = errno;
      ::close(fd);
      return fail(fmt::format("cannot read \"{}\": {}", path.string(), std::strerror(saved)));
    }
    if (n == 0) {
      break;
    }
    content.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return content;
}

Expected<void> write_file_atomic(const fs::path& path, std::string_view content) {
  const auto parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  auto pattern = (parent / ("." + path.filename().string() + ".tmp.XXXXXX")).string();
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) {
    return fail(fmt::format("cannot write \"{}\": {}", path.string(), std::strerror(errno)));
  }
  auto cleanup = [&](int error) {
    ::close(fd);
    ::unlink(pattern.c_str());
    return fail(fmt::format("cannot write \"{}\": {}", path.string(), std::strerror(error)));
  };
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return cleanup(errno);
    }
    written += static_cast<std::size_t>(n);
  }
  // mkstemp creates 0600; published files should have the usual umask-derived mode.
  if (::fchmod(fd, 0666 & ~current_umask()) != 0 || ::fsync(fd) != 0) {
    return cleanup(errno);
  }
  if (::close(fd) != 0) {
    const int saved = errno;
    ::unlink(pattern.c_str());
    return fail(fmt::format("cannot write \"{}\": {}", path.string(), std::strerror(saved)));
  }
  if (::rename(pattern.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(pattern.c_str());
    return fail(fmt::format("cannot write \"{}\": {}", path.string(), std::strerror(saved)));
  }
  return {};
}

mode_t current_umask() {
  if (std::FILE* status = std::fopen("/proc/self/status", "re")) {
    char line[256];
    unsigned value = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof line, status) != nullptr) {
      found = std::sscanf(line, "Umask: %o", &value) == 1;
    }
    std::fclose(status);
    if (found) {
      return static_cast<mode_t>(value);
    }
  }
  const mode_t mask = ::umask(0077);
  ::umask(mask);
  return mask;
}

}  // namespace kernelhub::util
