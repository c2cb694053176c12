// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <kernelhub/verify/trusted_root.hpp>

#include "verify_test_data.hpp"

using namespace kernelhub::verify;

TEST(VerifyTrustedRoot, EmbeddedProductionRootHasTheLogsCasAndTsa) {
  const TrustedRoot& root = production_trusted_root();
  ASSERT_EQ(root.tlogs.size(), 2u);
  EXPECT_EQ(root.tlogs[0].base_url, "https://rekor.sigstore.dev");
  EXPECT_EQ(base64_encode(root.tlogs[0].key_id), "wNI9atQGlz+VWfO6LRygH4QUfY/8W4RFwiT5i5WRgB0=");
  EXPECT_TRUE(root.tlogs[1].key) << "the Ed25519 Rekor v2 key loads";
  EXPECT_EQ(root.certificate_authorities.size(), 2u);
  EXPECT_EQ(root.ctlogs.size(), 2u);
  EXPECT_EQ(root.timestamp_authorities.size(), 1u);
  // The 2021 CA's end carries fractional seconds and is inclusive.
  const auto& first_ca = root.certificate_authorities[0];
  ASSERT_TRUE(first_ca.valid_for.end);
  EXPECT_TRUE(first_ca.valid_for.contains(*first_ca.valid_for.end));
  EXPECT_FALSE(first_ca.valid_for.contains(*first_ca.valid_for.end + 1));
  EXPECT_NE(root.find_tlog(root.tlogs[0].key_id), nullptr);
  EXPECT_EQ(root.find_tlog("nope"), nullptr);
}

TEST(VerifyTrustedRoot, RefusesAWrongMediaTypeAndAMissingStart) {
  auto document = nlohmann::json::parse(test::conformance_file(
      "trust-root-tlog-missing-validity-start_fail/trusted_root.json"));
  auto missing_start = parse_trusted_root(document.dump());
  ASSERT_FALSE(missing_start);
  EXPECT_NE(missing_start.error().message.find("validFor.start"), std::string::npos)
      << missing_start.error().message;

  document["mediaType"] = "application/vnd.dev.sigstore.trustedroot+json;version=0.9";
  auto wrong = parse_trusted_root(document.dump());
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message.find("unsupported trusted root format"), std::string::npos);
}
