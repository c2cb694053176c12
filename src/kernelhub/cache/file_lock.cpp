// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cache/file_lock.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace kernelhub::cache {

namespace fs = std::filesystem;

util::Expected<FileLock> FileLock::acquire(const fs::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) {
    fs::create_directories(path.parent_path(), ec);
  }
  if (ec) {
    return util::fail(fmt::format("cannot create \"{}\": {}", path.parent_path().string(), ec.message()));
  }
  while (true) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0664);
    if (fd < 0) {
      return util::fail(fmt::format("cannot open lock \"{}\": {}", path.string(), std::strerror(errno)));
    }
    // filelock chmods too, because the umask narrows the mode open() was given.
    ::fchmod(fd, 0664);
    int rc = 0;
    do {
      rc = ::flock(fd, LOCK_EX);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      const int saved = errno;
      ::close(fd);
      return util::fail(fmt::format("cannot lock \"{}\": {}", path.string(), std::strerror(saved)));
    }
    // Recent filelock versions unlink the lock file on release; when that happened while we
    // waited, we hold a lock on an orphaned inode that a newcomer would not see, so retry on
    // the file that is there now.
    struct stat held {};
    struct stat current {};
    if (::fstat(fd, &held) == 0 && ::stat(path.c_str(), &current) == 0 &&
        held.st_dev == current.st_dev && held.st_ino == current.st_ino) {
      return FileLock(fd);
    }
    ::close(fd);
  }
}

FileLock::FileLock(FileLock&& other) noexcept : m_fd(other.m_fd) {
  other.m_fd = -1;
}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    m_fd = other.m_fd;
    other.m_fd = -1;
  }
  return *this;
}

FileLock::~FileLock() {
  if (m_fd >= 0) {
    // Closing the descriptor releases the flock; the file stays, as filelock leaves it on
    // POSIX for the next waiter.
    ::close(m_fd);
  }
}

}  // namespace kernelhub::cache
