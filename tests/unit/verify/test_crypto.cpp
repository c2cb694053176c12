// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/verify/crypto.hpp>

using namespace kernelhub::verify;

TEST(VerifyCrypto, Base64DecodesPaddedStandardAlphabetAndSkipsLineBreaks) {
  EXPECT_EQ(base64_decode("aGVsbG8=").value(), "hello");
  EXPECT_EQ(base64_decode("aGVs\nbG8h").value(), "hell" "o!");
  EXPECT_EQ(base64_decode("aGk=\r\n").value(), "hi");
  EXPECT_EQ(base64_decode("").value(), "");
  EXPECT_EQ(base64_encode("hello"), "aGVsbG8=");
}

TEST(VerifyCrypto, Base64RefusesUrlSafeMissingPaddingAndStrayPads) {
  EXPECT_FALSE(base64_decode("aGVsbG8"));   // no padding
  EXPECT_FALSE(base64_decode("a-_s"));      // URL-safe alphabet
  EXPECT_FALSE(base64_decode("a=Vs"));      // pad in the middle
  EXPECT_FALSE(base64_decode("aGk=aGk="));  // pad before more data
  const auto error = base64_decode("INVALID!!!BASE64!!!ENCODING====");
  ASSERT_FALSE(error);
  EXPECT_NE(error.error().message.find("invalid base64"), std::string::npos);
}

TEST(VerifyCrypto, Rfc3339WithFractionsAndOffsets) {
  EXPECT_EQ(parse_rfc3339("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parse_rfc3339("2022-12-31T23:59:59.999Z"), 1672531199);
  EXPECT_EQ(parse_rfc3339("2021-03-07T03:20:29.000Z"), 1615087229);
  EXPECT_EQ(parse_rfc3339("1970-01-01T01:00:00+01:00"), 0);
  EXPECT_FALSE(parse_rfc3339("2022-12-31 23:59:59Z"));
  EXPECT_FALSE(parse_rfc3339("2022-13-01T00:00:00Z"));
  EXPECT_FALSE(parse_rfc3339("2022-12-31T23:59:59"));
}

TEST(VerifyCrypto, Sha256AndHex) {
  EXPECT_EQ(hex_lower(sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
