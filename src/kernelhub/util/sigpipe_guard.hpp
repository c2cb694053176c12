// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <csignal>

namespace kernelhub::util {

// Blocks SIGPIPE in this thread while alive, so that a write to a pipe or socket whose peer
// has gone fails with EPIPE instead of ending the process. A write(2) on a pipe and a
// sendfile(2) on a socket raise SIGPIPE (only send(2) can be told MSG_NOSIGNAL), and a library
// must not ignore the signal for the whole process behind its host's back. A SIGPIPE raised
// while blocked is consumed on the way out, unless the thread had it blocked already.
class SigpipeGuard {
 public:
  SigpipeGuard();
  ~SigpipeGuard();
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t m_previous{};
};

}  // namespace kernelhub::util
