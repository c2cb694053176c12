// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/spool_file.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <system_error>

namespace kernelhub::server {

namespace fs = std::filesystem;

bool SpoolFile::create(const fs::path& dir) {
  reset();
  std::string pattern = (dir / "body-XXXXXX").string();
  int fd = ::mkstemp(pattern.data());
  if (fd < 0 && errno == ENOENT) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    pattern = (dir / "body-XXXXXX").string();
    fd = ::mkstemp(pattern.data());
  }
  if (fd < 0) {
    return false;
  }
  ::close(fd);
  m_path = pattern;
  return true;
}

bool SpoolFile::map() {
  const int fd = ::open(m_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  struct stat info {};
  const bool sized = ::fstat(fd, &info) == 0;
  m_size = sized ? static_cast<std::size_t>(info.st_size) : 0;
  if (sized && m_size > 0) {
    void* data = ::mmap(nullptr, m_size, PROT_READ, MAP_PRIVATE, fd, 0);
    m_data = data == MAP_FAILED ? nullptr : static_cast<const char*>(data);
    if (m_data != nullptr) {
      ::madvise(const_cast<char*>(m_data), m_size, MADV_SEQUENTIAL);
    }
  }
  ::close(fd);
  return sized && (m_size == 0 || m_data != nullptr);
}

void SpoolFile::drop_pages(std::string_view part) const {
  if (m_data == nullptr || part.data() < m_data || part.data() + part.size() > m_data + m_size) {
    return;
  }
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(part.data());
  const auto end = begin + part.size();
  const std::uintptr_t first = (begin + page - 1) / page * page;
  const std::uintptr_t last = end / page * page;
  if (last > first) {
    ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
  }
}

void SpoolFile::reset() {
  if (m_data != nullptr) {
    ::munmap(const_cast<char*>(m_data), m_size);
    m_data = nullptr;
  }
  if (!m_path.empty()) {
    std::error_code ec;
    fs::remove(m_path, ec);
    m_path.clear();
  }
  m_size = 0;
}

}  // namespace kernelhub::server
