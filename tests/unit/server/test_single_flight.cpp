// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/single_flight.hpp>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace kernelhub::server {

namespace {

// Spins (yielding) until `done` holds: no sleeps, no deadline; a hang fails by ctest's timeout.
template <typename Done>
void wait_until(Done done) {
  while (!done()) {
    std::this_thread::yield();
  }
}

}  // namespace

TEST(SingleFlight, CallersOfOneKeyWhileItRunsShareOneRunAndItsResult) {
  SingleFlight<int> flights;
  std::atomic<int> runs{0};
  constexpr int k_callers = 8;
  std::vector<int> results(k_callers, -1);
  std::vector<std::thread> threads;
  for (int i = 0; i < k_callers; ++i) {
    threads.emplace_back([&, i] {
      results[static_cast<std::size_t>(i)] = flights.run("repo", [&] {
        ++runs;
        // The leader ends only once every other caller is waiting for it.
        wait_until([&] { return flights.waiters("repo") == k_callers - 1; });
        return 42;
      });
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(results, std::vector<int>(k_callers, 42));
  EXPECT_EQ(flights.waiters("repo"), 0u);
}

TEST(SingleFlight, DifferentKeysRunApartAndACallAfterTheFlightRunsAgain) {
  SingleFlight<int> flights;
  int runs = 0;
  EXPECT_EQ(flights.run("a", [&] { return ++runs; }), 1);
  EXPECT_EQ(flights.run("b", [&] { return ++runs; }), 2);
  EXPECT_EQ(flights.run("a", [&] { return ++runs; }), 3);
}

TEST(SingleFlight, WaitersOfALeaderThatThrowsRunTheWorkThemselves) {
  SingleFlight<int> flights;
  std::atomic<int> runs{0};
  std::atomic<bool> thrown{false};
  std::thread leader([&] {
    EXPECT_THROW(flights.run("k",
                             [&]() -> int {
                               ++runs;
                               wait_until([&] { return flights.waiters("k") == 1; });
                               thrown = true;
                               throw std::runtime_error("upstream exploded");
                             }),
                 std::runtime_error);
  });
  wait_until([&] { return runs.load() == 1; });
  const int result = flights.run("k", [&] {
    ++runs;
    return 7;
  });
  leader.join();
  EXPECT_TRUE(thrown);
  EXPECT_EQ(result, 7);
  EXPECT_EQ(runs, 2);
}

}  // namespace kernelhub::server
