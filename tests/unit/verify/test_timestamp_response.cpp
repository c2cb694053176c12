// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/verify/bundle.hpp>
#include <kernelhub/verify/bundle_verifier.hpp>
#include <kernelhub/verify/signing_certificate.hpp>
#include <kernelhub/verify/timestamp_response.hpp>

#include "verify_test_data.hpp"

using namespace kernelhub::verify;

namespace {

Bundle bundle_of(const std::string& name) {
  return parse_bundle(test::conformance_file(name + "/bundle.sigstore.json")).value();
}

TrustedRoot root_of(const std::string& name) {
  return parse_trusted_root(test::conformance_file(name + "/trusted_root.json")).value();
}

}  // namespace

TEST(VerifyTimestampResponse, TrustedAuthorityGivesGenTimeOverTheSignature) {
  const Bundle bundle = bundle_of("rekor2-happy-path");
  const TrustedRoot root = root_of("rekor2-happy-path");
  ASSERT_EQ(bundle.rfc3161_timestamps.size(), 1u);
  const auto time = verify_timestamp(bundle.rfc3161_timestamps[0], *bundle.signature, root);
  ASSERT_TRUE(time);
  EXPECT_TRUE(valid_at(bundle.leaf.get(), *time)) << "inside the ten-minute leaf";
  // Another message: the imprint no longer matches.
  EXPECT_FALSE(verify_timestamp(bundle.rfc3161_timestamps[0], *bundle.signature + "x", root));
  // The production root does not trust the staging timestamp authority.
  EXPECT_FALSE(verify_timestamp(bundle.rfc3161_timestamps[0], *bundle.signature,
                                production_trusted_root()));
  std::string tampered = bundle.rfc3161_timestamps[0];
  tampered[tampered.size() - 10] ^= 1;
  EXPECT_FALSE(verify_timestamp(tampered, *bundle.signature, root));
}

TEST(VerifyTimestampResponse, AnExpiredChainStillCountsAtGenTime) {
  const Bundle bundle = bundle_of("rekor2-timestamp-with-expired-cert-chain");
  EXPECT_TRUE(verify_timestamp(bundle.rfc3161_timestamps[0], *bundle.signature,
                               root_of("rekor2-timestamp-with-expired-cert-chain")));
}

TEST(VerifyTimestampResponse, RekorV2EntriesVerifyOnlyThroughTheTimestamp) {
  const std::vector<GitHubWorkflowPolicy> policies = {test::conformance_policy()};
  const std::string artifact = test::conformance_file("a.txt");
  const Bundle bundle = bundle_of("rekor2-happy-path");
  const TrustedRoot root = root_of("rekor2-happy-path");
  const auto verified = verify_artifact(artifact, bundle, policies, root);
  EXPECT_TRUE(verified) << verified.error().message;
  Bundle without = bundle;
  without.rfc3161_timestamps.clear();
  EXPECT_EQ(verify_artifact(artifact, without, policies, root).error().message,
            "not enough sources of verified time");
}

TEST(VerifyTimestampResponse, CertificatesOutOfDerOrderAreNoResponse) {
  // rust-asn1, under the reference's rfc3161-client, refuses this FreeTSA response.
  auto parsed = parse_bundle(test::conformance_file(
      "rekor2-timestamp-untrusted-tsa-with-embedded-cert_fail/bundle.sigstore.json"));
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message, "Invalid Timestamp Response");
  EXPECT_TRUE(is_timestamp_response(bundle_of("rekor2-happy-path").rfc3161_timestamps[0]));
}
