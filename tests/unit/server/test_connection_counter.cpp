// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/server/connection_counter.hpp>

using kernelhub::server::ConnectionCounter;

TEST(ConnectionCounter, LimitsEachPeerAndTheTotal) {
  ConnectionCounter counter(3, 2);
  EXPECT_TRUE(counter.try_add("10.0.0.1"));
  EXPECT_TRUE(counter.try_add("10.0.0.1"));
  EXPECT_FALSE(counter.try_add("10.0.0.1"));  // the peer's two slots are taken
  EXPECT_TRUE(counter.try_add("10.0.0.2"));
  EXPECT_FALSE(counter.try_add("10.0.0.3"));  // all three are taken
  counter.remove("10.0.0.1");
  EXPECT_TRUE(counter.try_add("10.0.0.3"));
  EXPECT_FALSE(counter.try_add("10.0.0.2"));
}

TEST(ConnectionCounter, ARefusedPeerHoldsNoSlot) {
  ConnectionCounter counter(1, 1);
  EXPECT_TRUE(counter.try_add("a"));
  EXPECT_FALSE(counter.try_add("b"));
  counter.remove("a");
  EXPECT_TRUE(counter.try_add("b"));
}
