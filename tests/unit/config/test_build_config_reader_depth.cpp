// SPDX-License-Identifier: Apache-2.0
// build.toml with a key of 50,000 dotted parts (issue 12, item 12): one located error before
// toml++ sees the text (it overflowed its stack on it), quoting only the start of the line.
#include <string>

#include <gtest/gtest.h>

#include "reader_test_support.hpp"

namespace kernelhub::config {
namespace {

using testing::read_toml;

TEST(BuildConfigReaderDepth, AFiftyThousandPartKeyIsOneLocatedError) {
  std::string key = "k";
  for (int i = 1; i < 50000; ++i) {
    key += ".k";
  }
  const auto outcome = read_toml(std::string(testing::k_general5) + "  " + key + " = 1\n");
  EXPECT_FALSE(outcome.loaded);
  ASSERT_EQ(outcome.errors().size(), 1u);
  const auto error = outcome.errors().front();
  EXPECT_EQ(error.location, (util::SourceLocation{"build.toml", 7, 3}));
  EXPECT_NE(error.message.find("more than 100 levels"), std::string::npos) << error.message;
  EXPECT_LT(error.source_line.size(), 200u);
  EXPECT_EQ(error.source_line.rfind("  k.k.k", 0), 0u);
}

TEST(BuildConfigReaderDepth, AKeyAtTheLimitIsLeftToTheReader) {
  // Under [general]: 1 + 99 parts = 100 levels, the most that is accepted.
  std::string key = "k";
  for (int i = 1; i < 99; ++i) {
    key += ".k";
  }
  const auto outcome = read_toml(std::string(testing::k_general5) + key + " = 1\n");
  for (const auto& error : outcome.errors()) {
    EXPECT_EQ(error.message.find("levels deep"), std::string::npos) << error.message;
  }
}

}  // namespace
}  // namespace kernelhub::config
