// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/variants/release_version.hpp>

namespace {

using kernelhub::variants::ReleaseVersion;

ReleaseVersion v(const char* text) { return ReleaseVersion::parse(text).value(); }

TEST(ReleaseVersion, KeepsComponentCountButDropsLeadingZeros) {
  EXPECT_EQ(v("13.0").to_string(), "13.0");
  EXPECT_EQ(v("26.00.1").to_string(), "26.0.1");
  EXPECT_EQ(v("6.3.42131").to_string(), "6.3.42131");
  EXPECT_EQ(ReleaseVersion::from_parts("0", "010").to_string(), "0.10");
}

TEST(ReleaseVersion, ComparesLikePackaging) {
  EXPECT_EQ(v("26"), v("26.0"));
  EXPECT_LT(v("15.7"), v("26.0"));
  EXPECT_LT(v("26.0"), v("26.0.1"));
  EXPECT_LT(v("2.9"), v("2.10"));
  EXPECT_GT(v("100000000000000000000000.1"), v("99999999999999999999999.9"));
}

TEST(ReleaseVersion, MinorDefaultsToZero) {
  EXPECT_EQ(v("13").minor(), "0");
  EXPECT_EQ(v("13").flattened(), "130");
  EXPECT_EQ(v("2025.3.2").flattened(), "20253");
}

TEST(ReleaseVersion, RejectsNonNumericText) {
  for (auto bad : {"", "1.", ".1", "1..2", "1.2a", "v1", " 1", "1,2"}) {
    const auto parsed = ReleaseVersion::parse(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_EQ(parsed.error().message, std::string("invalid version \"") + bad + "\"");
  }
}

}  // namespace
