// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/request_target.hpp>

#include <gtest/gtest.h>

namespace kernelhub::server {

TEST(RequestTarget, SplitsBeforeDecodingSoEncodedSlashesStayInTheirSegment) {
  const auto target = parse_request_target("/org/m/resolve/feature%2Fx/dir/a%20b.txt");
  ASSERT_TRUE(target);
  const std::vector<std::string> expected = {"org", "m", "resolve", "feature/x", "dir",
                                             "a b.txt"};
  EXPECT_EQ(target->segments, expected);
  EXPECT_EQ(target->path, "/org/m/resolve/feature%2Fx/dir/a%20b.txt");
}

TEST(RequestTarget, KeepsPlusInPathsButNotInQueries) {
  const auto target = parse_request_target("/a/b%2Bc+d?q=x+y&flag");
  ASSERT_TRUE(target);
  EXPECT_EQ(target->segments.back(), "b+c+d");
  EXPECT_EQ(target->param("q"), "x y");
  EXPECT_EQ(target->param("flag"), "");
  EXPECT_FALSE(target->param("missing"));
}

TEST(RequestTarget, RootHasNoSegments) {
  const auto target = parse_request_target("/");
  ASSERT_TRUE(target);
  EXPECT_TRUE(target->segments.empty());
}

TEST(RequestTarget, FlagsAcceptEveryClientSpelling) {
  const auto target = parse_request_target("/x?a=true&b=True&c=1&d=false&e=0");
  ASSERT_TRUE(target);
  EXPECT_TRUE(target->flag("a"));
  EXPECT_TRUE(target->flag("b"));
  EXPECT_TRUE(target->flag("c"));
  EXPECT_FALSE(target->flag("d"));
  EXPECT_FALSE(target->flag("e"));
  EXPECT_FALSE(target->flag("f"));
}

TEST(RequestTarget, RefusesBadEscapesAndNul) {
  EXPECT_FALSE(parse_request_target("/a/%zz"));
  EXPECT_FALSE(parse_request_target("/a/%2"));
  EXPECT_FALSE(parse_request_target("/a/b%00c"));
  EXPECT_FALSE(parse_request_target("/a?x=%g1"));
}

TEST(PercentEncode, MatchesPythonQuote) {
  EXPECT_EQ(percent_encode("dir/a b+c.txt", Slash::keep), "dir/a%20b%2Bc.txt");
  EXPECT_EQ(percent_encode("refs/pr/1", Slash::encode), "refs%2Fpr%2F1");
  EXPECT_EQ(percent_decode("refs%2fpr%2F1", PlusMeans::plus), "refs/pr/1");
}

}  // namespace kernelhub::server
