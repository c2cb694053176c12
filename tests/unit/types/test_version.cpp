// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/types/version.hpp>

using kernelhub::types::Version;

TEST(Version, ParsesAndNormalisesTrailingZeros) {
  EXPECT_EQ(Version::parse("2.12.0").value(), Version::parse("2.12").value());
  EXPECT_EQ(Version::parse("2.12.0").value().to_string(), "2.12");
  EXPECT_EQ(Version::parse("0").value().to_string(), "0");
  EXPECT_EQ(Version::parse("2025.3.2").value().to_string(), "2025.3.2");
}

TEST(Version, OrdersNumerically) {
  EXPECT_LT(Version::parse("2.9").value(), Version::parse("2.10").value());
  EXPECT_LT(Version::parse("2").value(), Version::parse("2.0.1").value());
}

TEST(Version, FlattensMajorAndMinor) {
  EXPECT_EQ(Version::parse("2.12").value().flattened(), "212");
  EXPECT_EQ(Version::parse("0.1").value().flattened(), "01");
  EXPECT_EQ(Version::parse("2025.3.2").value().flattened(), "20253");
  EXPECT_EQ(Version::parse("13").value().flattened(), "130");
}

TEST(Version, RejectsNonNumbers) {
  EXPECT_EQ(Version::parse("").error().message, "empty version string");
  for (auto bad : {"2.x", "2..1", ".2", "2.", "-1", "1.2a", " 1"}) {
    EXPECT_FALSE(Version::parse(bad)) << bad;
  }
}
