// SPDX-License-Identifier: Apache-2.0
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <poll.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include <gtest/gtest.h>

#include <kernelhub/cache/file_lock.hpp>

namespace kernelhub::cache {
namespace {

TEST(FileLock, CreatesTheFileGroupWritable) {
  {
    auto lock = FileLock::acquire(".locks/repo/abc.lock");
    ASSERT_TRUE(lock) << lock.error().message;
  }
  struct stat info {};
  ASSERT_EQ(::stat(".locks/repo/abc.lock", &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0664u);
}

TEST(FileLock, ExcludesAnotherThread) {
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  const auto worker = [&] {
    for (int i = 0; i < 20; ++i) {
      auto lock = FileLock::acquire("shared.lock");
      ASSERT_TRUE(lock);
      const int now = ++inside;
      most = std::max(most.load(), now);
      std::this_thread::yield();
      --inside;
    }
  };
  std::thread a(worker);
  std::thread b(worker);
  a.join();
  b.join();
  EXPECT_EQ(most.load(), 1);
}

TEST(FileLock, ExcludesAnotherProcessUntilReleased) {
  // flock(1) from util-linux takes the same flock(2) lock as Python's filelock; it prints
  // only once it holds the lock. popen execs a shell, so our O_CLOEXEC descriptor is not
  // inherited (a fork alone would share our lock with the child).
  if (std::system("command -v flock > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "flock(1) is not installed";
  }
  auto held = FileLock::acquire("proc.lock");
  ASSERT_TRUE(held);
  std::FILE* other = ::popen("flock -x proc.lock echo locked", "r");
  ASSERT_NE(other, nullptr);
  struct pollfd wait_for {::fileno(other), POLLIN, 0};
  EXPECT_EQ(::poll(&wait_for, 1, 300), 0) << "the other process got the lock while we held it";
  held = FileLock::acquire("other.lock");  // replacing the held lock releases proc.lock
  char line[16] = {};
  ASSERT_NE(std::fgets(line, sizeof line, other), nullptr);
  EXPECT_STREQ(line, "locked\n");
  EXPECT_EQ(::pclose(other), 0);
}

}  // namespace
}  // namespace kernelhub::cache
