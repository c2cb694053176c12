// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/byte_range.hpp>

#include <gtest/gtest.h>

namespace kernelhub::server {

namespace {

void expect_partial(std::string_view header, std::uint64_t size, std::uint64_t offset,
                    std::uint64_t length) {
  const auto decision = decide_range(header, size);
  EXPECT_EQ(decision.outcome, RangeOutcome::partial) << header;
  EXPECT_EQ(decision.offset, offset) << header;
  EXPECT_EQ(decision.length, length) << header;
}

}  // namespace

TEST(ByteRange, NoHeaderMeansTheWholeBody) {
  const auto decision = decide_range(std::nullopt, 10);
  EXPECT_EQ(decision.outcome, RangeOutcome::full);
  EXPECT_EQ(decision.length, 10u);
}

TEST(ByteRange, OpenClosedAndSuffixRanges) {
  expect_partial("bytes=4-", 10, 4, 6);  // the client's resume form
  expect_partial("bytes=0-0", 10, 0, 1);
  expect_partial("bytes=2-5", 10, 2, 4);
  expect_partial("bytes=2-500", 10, 2, 8);  // clamped to the end
  expect_partial("bytes=-3", 10, 7, 3);
  expect_partial("bytes=-30", 10, 0, 10);
  expect_partial(" bytes=1-2 ", 10, 1, 2);
}

TEST(ByteRange, StartPastTheEndIsUnsatisfiable) {
  EXPECT_EQ(decide_range("bytes=10-", 10).outcome, RangeOutcome::unsatisfiable);
  EXPECT_EQ(decide_range("bytes=0-", 0).outcome, RangeOutcome::unsatisfiable);
  EXPECT_EQ(decide_range("bytes=-0", 10).outcome, RangeOutcome::unsatisfiable);
}

TEST(ByteRange, SyntaxWeDoNotServeIsIgnored) {
  for (const char* header : {"bytes=5-2", "bytes=a-", "items=0-1", "bytes=0-1,3-4", "bytes=",
                             "bytes=-", "bytes=99999999999999999999999-"}) {
    EXPECT_EQ(decide_range(header, 10).outcome, RangeOutcome::full) << header;
  }
}

}  // namespace kernelhub::server
