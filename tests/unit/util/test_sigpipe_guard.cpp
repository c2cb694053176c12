// SPDX-License-Identifier: Apache-2.0
#include <cerrno>
#include <csignal>
#include <pthread.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <kernelhub/util/sigpipe_guard.hpp>

using kernelhub::util::SigpipeGuard;

namespace {

bool sigpipe_blocked() {
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  return sigismember(&mask, SIGPIPE) == 1;
}

bool sigpipe_pending() {
  sigset_t pending;
  sigpending(&pending);
  return sigismember(&pending, SIGPIPE) == 1;
}

// A write to a pipe whose reader has closed: EPIPE under the guard.
int write_to_a_closed_pipe() {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  errno = 0;
  const auto written = ::write(fds[1], "x", 1);
  const int error = written < 0 ? errno : 0;
  ::close(fds[1]);
  return error;
}

}  // namespace

TEST(SigpipeGuard, AWriteToAClosedPipeFailsWithEpipeAndLeavesNoSignalBehind) {
  ASSERT_FALSE(sigpipe_blocked());
  {
    const SigpipeGuard guard;
    EXPECT_TRUE(sigpipe_blocked());
    EXPECT_EQ(write_to_a_closed_pipe(), EPIPE);
    EXPECT_TRUE(sigpipe_pending());
  }
  // Had the signal stayed pending, unblocking it would have ended this test binary.
  EXPECT_FALSE(sigpipe_blocked());
  EXPECT_FALSE(sigpipe_pending());
}

TEST(SigpipeGuard, AThreadThatBlockedTheSignalItselfKeepsItsPendingSignal) {
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  sigset_t before;
  pthread_sigmask(SIG_BLOCK, &pipe, &before);
  {
    const SigpipeGuard guard;
    EXPECT_EQ(write_to_a_closed_pipe(), EPIPE);
  }
  EXPECT_TRUE(sigpipe_blocked());
  EXPECT_TRUE(sigpipe_pending());
  const timespec no_wait{0, 0};
  EXPECT_EQ(sigtimedwait(&pipe, nullptr, &no_wait), SIGPIPE);
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
}
