// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/retry_policy.hpp>

#include <gtest/gtest.h>

namespace kernelhub::hub {
namespace {

using std::chrono::milliseconds;

TEST(RetryPolicy, RetryableStatuses) {
  for (long status : {408L, 429L, 500L, 502L, 503L, 504L}) {
    EXPECT_TRUE(RetryPolicy::retryable_status(status)) << status;
  }
  for (long status : {200L, 400L, 401L, 403L, 404L, 409L, 412L, 501L}) {
    EXPECT_FALSE(RetryPolicy::retryable_status(status)) << status;
  }
}

TEST(RetryPolicy, BackoffDoublesUpToTheCap) {
  RetryPolicy policy;
  EXPECT_EQ(policy.delay_after(1), milliseconds(1000));
  EXPECT_EQ(policy.delay_after(2), milliseconds(2000));
  EXPECT_EQ(policy.delay_after(3), milliseconds(4000));
  EXPECT_EQ(policy.delay_after(4), milliseconds(8000));
  EXPECT_EQ(policy.delay_after(5), milliseconds(8000));
  EXPECT_EQ(policy.delay_after(60), milliseconds(8000));
}

TEST(RetryPolicy, RetryAfterWinsWhenLongerButIsBounded) {
  RetryPolicy policy;
  EXPECT_EQ(policy.delay_after(1, milliseconds(5000)), milliseconds(5000));
  EXPECT_EQ(policy.delay_after(4, milliseconds(5000)), milliseconds(8000));
  EXPECT_EQ(policy.delay_after(1, milliseconds(3'600'000)), milliseconds(60'000));
}

}  // namespace
}  // namespace kernelhub::hub
