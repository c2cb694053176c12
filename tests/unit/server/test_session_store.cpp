// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/session_store.hpp>

#include <gtest/gtest.h>

namespace kernelhub::server {

using namespace std::chrono_literals;

TEST(SessionStore, OpenedSessionGivesItsTokenUntilItExpires) {
  SessionStore store(60s);
  const auto start = SessionStore::Clock::time_point{} + 1000s;
  const std::string id = store.open("tok-a", start);
  EXPECT_EQ(id.size(), 64u);
  EXPECT_EQ(id.find("tok-a"), std::string::npos);
  EXPECT_EQ(store.token_of(id, start + 59s), "tok-a");
  EXPECT_EQ(store.token_of(id, start + 60s), std::nullopt);
  // An expired session is gone, not merely hidden.
  EXPECT_EQ(store.size(), 0u);
  EXPECT_EQ(store.token_of(id, start), std::nullopt);
}

TEST(SessionStore, UnknownAndClosedIdsGiveNothing) {
  SessionStore store(3600s);
  const auto now = SessionStore::Clock::now();
  EXPECT_EQ(store.token_of("", now), std::nullopt);
  EXPECT_EQ(store.token_of(std::string(64, '0'), now), std::nullopt);
  const std::string first = store.open("tok-a", now);
  const std::string second = store.open("tok-b", now);
  EXPECT_NE(first, second);
  EXPECT_EQ(store.token_of(second, now), "tok-b");
  store.close(first);
  EXPECT_EQ(store.token_of(first, now), std::nullopt);
  EXPECT_EQ(store.token_of(second, now), "tok-b");
}

TEST(SessionStore, StaysBoundedByDroppingTheSessionNearestExpiry) {
  SessionStore store(100s, 2);
  const auto start = SessionStore::Clock::time_point{} + 1000s;
  const std::string a = store.open("a", start);
  const std::string b = store.open("b", start + 1s);
  const std::string c = store.open("c", start + 2s);
  EXPECT_EQ(store.size(), 2u);
  EXPECT_EQ(store.token_of(a, start + 3s), std::nullopt);
  EXPECT_EQ(store.token_of(b, start + 3s), "b");
  EXPECT_EQ(store.token_of(c, start + 3s), "c");
}

}  // namespace kernelhub::server
