// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/root_lock.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace kernelhub::server {

namespace {

constexpr const char* k_lock_name = ".kernelhub-serve.lock";

// The pid the holder wrote, or "" (it may not have written it yet).
std::string holder_pid(int fd) {
  char text[32] = {};
  const ssize_t got = ::pread(fd, text, sizeof(text) - 1, 0);
  std::string pid(text, got > 0 ? static_cast<std::size_t>(got) : 0);
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) {
    pid.pop_back();
  }
  return pid.find_first_not_of("0123456789") == std::string::npos ? pid : "";
}

}  // namespace

util::Expected<RootLock> RootLock::acquire(const std::filesystem::path& root) {
  const std::filesystem::path path = root / k_lock_name;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    return util::fail(fmt::format("cannot open \"{}\": {}", path.string(), std::strerror(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string pid = holder_pid(fd);
    ::close(fd);
    if (error != EWOULDBLOCK) {
      return util::fail(fmt::format("cannot lock \"{}\": {}", path.string(), std::strerror(error)));
    }
    return util::fail(fmt::format(
        "another kernelhub serve{} is serving \"{}\" (it holds \"{}\"); stop it first, or give "
        "this one another --root",
        pid.empty() ? "" : fmt::format(" (pid {})", pid), root.string(), path.string()));
  }
  const std::string pid = fmt::format("{}\n", ::getpid());
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int error = errno;
    ::close(fd);
    return util::fail(fmt::format("cannot write \"{}\": {}", path.string(), std::strerror(error)));
  }
  return RootLock(fd);
}

RootLock::RootLock(RootLock&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}

RootLock& RootLock::operator=(RootLock&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    m_fd = std::exchange(other.m_fd, -1);
  }
  return *this;
}

RootLock::~RootLock() {
  if (m_fd >= 0) {
    // Closing releases the lock; the file stays (removing it would let a third server lock a
    // new file while a second still waits on the old one).
    ::close(m_fd);
  }
}

}  // namespace kernelhub::server
