// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/util/sigpipe_guard.hpp>

#include <cerrno>
#include <ctime>
#include <pthread.h>

namespace kernelhub::util {

namespace {

sigset_t sigpipe_only() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  return set;
}

}  // namespace

SigpipeGuard::SigpipeGuard() {
  const sigset_t pipe = sigpipe_only();
  pthread_sigmask(SIG_BLOCK, &pipe, &m_previous);
}

SigpipeGuard::~SigpipeGuard() {
  if (!sigismember(&m_previous, SIGPIPE)) {
    sigset_t pending;
    sigemptyset(&pending);
    if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) {
      const sigset_t pipe = sigpipe_only();
      const timespec no_wait{0, 0};
      while (sigtimedwait(&pipe, nullptr, &no_wait) < 0 && errno == EINTR) {
      }
    }
  }
  pthread_sigmask(SIG_SETMASK, &m_previous, nullptr);
}

}  // namespace kernelhub::util
