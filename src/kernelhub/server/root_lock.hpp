// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>

#include <kernelhub/util/expected.hpp>

namespace kernelhub::server {

// One `kernelhub serve` per root (issue 20 item 6): a second one would clear the first's spool
// folder and its temporary git objects under it. The lock is an exclusive flock on
// `<root>/.kernelhub-serve.lock`, which holds the holder's pid; the kernel drops it when the
// process ends however it ends, so a killed server never leaves the root locked.
class RootLock {
 public:
  // The lock, or an error naming the pid of the server that holds it.
  static util::Expected<RootLock> acquire(const std::filesystem::path& root);

  RootLock(RootLock&& other) noexcept;
  RootLock& operator=(RootLock&& other) noexcept;
  RootLock(const RootLock&) = delete;
  RootLock& operator=(const RootLock&) = delete;
  ~RootLock();

 private:
  explicit RootLock(int fd) : m_fd(fd) {}
  int m_fd = -1;
};

}  // namespace kernelhub::server
