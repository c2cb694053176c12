// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/login_throttle.hpp>

#include <gtest/gtest.h>

namespace kernelhub::server {

using namespace std::chrono_literals;

TEST(LoginThrottle, RefusesAnAddressAfterItsFailuresUntilTheWindowPasses) {
  LoginThrottle throttle(3, 60s);
  const auto start = LoginThrottle::Clock::time_point{} + 1000s;
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(throttle.allowed("10.0.0.1", start + 1s * i));
    throttle.failed("10.0.0.1", start + 1s * i);
  }
  EXPECT_FALSE(throttle.allowed("10.0.0.1", start + 10s));
  EXPECT_FALSE(throttle.allowed("10.0.0.1", start + 59s));
  // Another address is not held back by this one's failures.
  EXPECT_TRUE(throttle.allowed("10.0.0.2", start + 10s));
  EXPECT_TRUE(throttle.allowed("10.0.0.1", start + 60s));
  // The count started again: one more failure does not refuse it.
  throttle.failed("10.0.0.1", start + 61s);
  EXPECT_TRUE(throttle.allowed("10.0.0.1", start + 62s));
}

TEST(LoginThrottle, ASuccessClearsTheFailures) {
  LoginThrottle throttle(2, 60s);
  const auto now = LoginThrottle::Clock::now();
  throttle.failed("::1", now);
  throttle.succeeded("::1");
  throttle.failed("::1", now);
  EXPECT_TRUE(throttle.allowed("::1", now));
  throttle.failed("::1", now);
  EXPECT_FALSE(throttle.allowed("::1", now));
}

}  // namespace kernelhub::server
