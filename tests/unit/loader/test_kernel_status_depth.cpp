// SPDX-License-Identifier: Apache-2.0
// kernel-status.toml comes from the Hub: a key of 50,000 dotted parts is a value error naming
// its line, not a crash inside toml++ (issue 12, item 12).
#include <kernelhub/loader/kernel_status.hpp>

#include <string>

#include <gtest/gtest.h>

namespace kernelhub::loader {
namespace {

TEST(KernelStatusDepth, AFiftyThousandPartKeyIsRefusedWithItsLine) {
  std::string text = "kind = \"redirect\"\ndestination = \"org/other\"\nk";
  for (int i = 1; i < 50000; ++i) {
    text += ".k";
  }
  text += " = 1\n";
  const auto parsed = parse_kernel_status(text);
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().kind, LoadErrorKind::value);
  EXPECT_NE(parsed.error().message.find("line 3, column 1"), std::string::npos)
      << parsed.error().message;
}

}  // namespace
}  // namespace kernelhub::loader
