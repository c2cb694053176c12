// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <filesystem>
#include <future>
#include <thread>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

// For tests of code that must refuse a FIFO without blocking: runs `call` on a thread and, if
// it has not returned within `limit`, opens the FIFO for writing and closes it, which ends a
// blocked open or read (EOF), so a regression fails the test instead of hanging it.
namespace kernelhub::testing {

inline std::filesystem::path make_fifo(const std::filesystem::path& path) {
  std::filesystem::remove(path);
  ::mkfifo(path.c_str(), 0600);
  return path;
}

template <typename Call>
auto call_with_fifo_unblocker(const std::filesystem::path& fifo, Call call, bool& blocked,
                              std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  auto future = std::async(std::launch::async, call);
  blocked = future.wait_for(limit) != std::future_status::ready;
  if (blocked) {
    // Keep the writer open until the reader has returned, so its read sees EOF, not a reopen.
    for (int tries = 0; tries < 100 && future.wait_for(std::chrono::milliseconds(0)) !=
                                           std::future_status::ready;
         ++tries) {
      const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (fd >= 0) {
        ::close(fd);
      }
    }
  }
  return future.get();
}

}  // namespace kernelhub::testing
