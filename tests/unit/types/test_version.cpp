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
  for (auto bad : {"2.x", "2..1", ".2", "2.", "-1", "1.2a", "1 .2"}) {
    EXPECT_FALSE(Version::parse(bad)) << bad;
  }
}

TEST(Version, TrimsLikeRustButNotBetweenDots) {
  EXPECT_EQ(Version::parse(" 2.1 ").value().to_string(), "2.1");
  EXPECT_EQ(Version::parse("\t3\n").value().to_string(), "3");
  EXPECT_EQ(Version::parse("\xC2\xA0" "2\xE3\x80\x80").value().to_string(), "2");  // NBSP, U+3000
  EXPECT_FALSE(Version::parse("1. 2"));
  EXPECT_FALSE(Version::parse("\xE2\x80\x8B" "1"));  // zero-width space is not White_Space
  EXPECT_EQ(Version::parse(" ").error().message, "empty version string");
}

TEST(Version, ComponentsAreRustUnsignedIntegers) {
  EXPECT_EQ(Version::parse("+1.+2").value().to_string(), "1.2");
  EXPECT_EQ(Version::parse("007.010").value().to_string(), "7.10");
  EXPECT_EQ(Version::parse("18446744073709551615").value().major(), 18446744073709551615u);
  for (auto bad : {"+", "++1", "18446744073709551616", "1.-0", "0x1"}) {
    EXPECT_FALSE(Version::parse(bad)) << bad;
  }
}
