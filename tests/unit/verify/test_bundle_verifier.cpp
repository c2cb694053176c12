// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <kernelhub/verify/bundle.hpp>
#include <kernelhub/verify/bundle_verifier.hpp>

#include "verify_test_data.hpp"

using namespace kernelhub::verify;

namespace {

std::string verdict(const std::string& case_name, const std::string& artifact_name = "a.txt",
                    std::vector<GitHubWorkflowPolicy> policies = {test::conformance_policy()}) {
  auto bundle = parse_bundle(test::conformance_file(case_name + "/bundle.sigstore.json"));
  if (!bundle) {
    return "invalid: " + bundle.error().message;
  }
  auto verified = verify_artifact(test::conformance_file(artifact_name), *bundle, policies,
                                  production_trusted_root());
  return verified ? "ok" : verified.error().message;
}

}  // namespace

TEST(VerifyBundleVerifier, ConformanceHappyPathsVerifyOffline) {
  for (const char* name : {"happy-path-v0.1", "happy-path-v0.2", "happy-path-v0.3",
                           "happy-path-v0.3-new-mediaType"}) {
    EXPECT_EQ(verdict(name), "ok") << name;
  }
}

TEST(VerifyBundleVerifier, ConformanceFailuresFailAtTheirStep) {
  EXPECT_EQ(verdict("signature-mismatch_fail"), "Signature is invalid for input");
  EXPECT_EQ(verdict("message-digest-mismatch_fail"), "Bundle message digest mismatch");
  EXPECT_NE(verdict("set-invalid-signature_fail").find("SET"), std::string::npos);
  EXPECT_NE(verdict("checkpoint-wrong-roothash_fail").find("invalid log entry"), std::string::npos);
  EXPECT_NE(verdict("invalid-checkpoint-signature_fail").find("checkpoint"), std::string::npos);
  EXPECT_NE(verdict("inclusion-proof-corrupted-hash_fail").find("inclusion proof"),
            std::string::npos);
  EXPECT_NE(verdict("bundle-from-wrong-instance_fail"), "ok");
  EXPECT_NE(verdict("wrong-hashedrekord-artifact_fail"), "ok");
  EXPECT_NE(verdict("wrong-hashedrekord-cert-and-sig_fail"), "ok");
  EXPECT_NE(verdict("wrong-hashedrekord-entry_fail"), "ok");
  EXPECT_NE(verdict("incorrect-public-key_fail"), "ok");
  EXPECT_EQ(verdict("happy-path-intoto-in-dsse-v3"), "Missing bundle message signature");
}

TEST(VerifyBundleVerifier, AnotherArtifactOrIdentityIsRefused) {
  EXPECT_EQ(verdict("happy-path-v0.3", "happy-path-v0.3/README"), "Bundle message digest mismatch");
  GitHubWorkflowPolicy other = test::conformance_policy();
  other.signer_uris = {"https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/"
                       ".github/workflows/other.yml@refs/heads/main"};
  EXPECT_EQ(verdict("happy-path-v0.3", "a.txt", {other}), "0 of 1 policies succeeded");
  EXPECT_EQ(verdict("happy-path-v0.3", "a.txt", default_policies()), "0 of 1 policies succeeded");
  EXPECT_EQ(verdict("happy-path-v0.3", "a.txt", {}), "0 of 0 policies succeeded");
}

TEST(VerifyBundleVerifier, TamperedCertificateOrEntryIsRefused) {
  const std::string artifact = test::conformance_file("a.txt");
  auto document =
      nlohmann::json::parse(test::conformance_file("happy-path-v0.3/bundle.sigstore.json"));
  {
    // One byte of the certificate's signature: the chain no longer verifies.
    auto der = base64_decode(document["verificationMaterial"]["certificate"]["rawBytes"]
                                 .get<std::string>())
                   .value();
    der[der.size() - 5] ^= 1;
    auto copy = document;
    copy["verificationMaterial"]["certificate"]["rawBytes"] = base64_encode(der);
    auto bundle = parse_bundle(copy.dump());
    ASSERT_TRUE(bundle) << bundle.error().message;
    auto result = verify_artifact(artifact, *bundle, std::vector{test::conformance_policy()},
                                  production_trusted_root());
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("chain"), std::string::npos) << result.error().message;
  }
  {
    // The log's integrated time moved: the signed entry timestamp no longer covers it.
    auto copy = document;
    auto& entry = copy["verificationMaterial"]["tlogEntries"][0];
    entry["integratedTime"] =
        std::to_string(std::stoll(entry["integratedTime"].get<std::string>()) + 1);
    auto bundle = parse_bundle(copy.dump());
    ASSERT_TRUE(bundle);
    auto result = verify_artifact(artifact, *bundle, std::vector{test::conformance_policy()},
                                  production_trusted_root());
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("SET"), std::string::npos) << result.error().message;
  }
}
