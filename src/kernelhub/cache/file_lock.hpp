// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>

#include <kernelhub/util/expected.hpp>

namespace kernelhub::cache {

// An exclusive advisory lock on a file, held until destruction: `flock(LOCK_EX)` on a file
// created with mode 0664, which is what Python's `filelock.FileLock` (huggingface_hub's
// `WeakFileLock`) takes on POSIX, so our client and huggingface_hub wait for each other on
// the same `<cache>/.locks/<repo folder>/<etag>.lock`. flock locks belong to the open file
// description, so two threads of one process that each acquire() also exclude each other.
class FileLock {
 public:
  // Blocks until the lock is held; creates the file and its parent folders when missing.
  static util::Expected<FileLock> acquire(const std::filesystem::path& path);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : m_fd(fd) {}

  int m_fd = -1;
};

}  // namespace kernelhub::cache
