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

// The verdict on a conformance case's bundle against `root_json` (a trusted root document).
std::string verdict_under(const std::string& case_name, const nlohmann::json& root_json) {
  auto bundle = parse_bundle(test::conformance_file(case_name + "/bundle.sigstore.json"));
  auto root = parse_trusted_root(root_json.dump());
  if (!bundle || !root) {
    return "invalid input";
  }
  auto verified = verify_artifact(test::conformance_file("a.txt"), *bundle,
                                  std::vector{test::conformance_policy()}, *root);
  return verified ? "ok" : verified.error().message;
}

// The log whose key id (raw bytes, base64 in the document) starts with `prefix`.
nlohmann::json& log_with_key(nlohmann::json& logs, std::string_view prefix) {
  for (auto& log : logs) {
    const auto id = base64_decode(log["logId"]["keyId"].get<std::string>()).value();
    if (id.compare(0, prefix.size(), prefix) == 0) {
      return log;
    }
  }
  throw std::runtime_error("no such log in the trusted root");
}

// happy-path-v0.3: its SCT is from 2024-03-19T17:26:26.470Z, by the production CT log whose key
// id starts with dd 3d 30 6a; its Rekor v1 entry was integrated at 1710869186 (17:26:26).
const std::string k_ct_log = "\xdd\x3d\x30\x6a";
// rekor2-happy-path: its TSA timestamp is from 2025-06-12, its Rekor v2 log key id starts f3 0d.
const std::string k_rekor2_log = "\xf3\x0d\x5a\x99";

}  // namespace

TEST(VerifyBundleVerifier, ConformanceHappyPathsVerifyOffline) {
  for (const char* name : {"happy-path-v0.1", "happy-path-v0.2", "happy-path-v0.3",
                           "happy-path-v0.3-new-mediaType"}) {
    EXPECT_EQ(verdict(name), "ok") << name;
  }
}

TEST(VerifyBundleVerifier, AnyIdentityCheckRunsAtThePolicyStep) {
  // The caller's own rule (kernelhub.verify passes sigstore policies this way) sees the leaf
  // once; its refusal is the reason, and it runs after the chain and before the artifact.
  auto bundle = parse_bundle(test::conformance_file("happy-path-v0.3/bundle.sigstore.json"));
  ASSERT_TRUE(bundle) << bundle.error().message;
  int calls = 0;
  const IdentityCheck accept = [&](X509* leaf) -> kernelhub::util::Expected<void> {
    ++calls;
    EXPECT_EQ(leaf, bundle->leaf.get());
    return {};
  };
  EXPECT_TRUE(verify_artifact(test::conformance_file("a.txt"), *bundle, accept,
                              production_trusted_root()));
  EXPECT_EQ(calls, 1);
  const IdentityCheck refuse = [](X509*) -> kernelhub::util::Expected<void> {
    return kernelhub::util::fail("not this signer");
  };
  EXPECT_EQ(verify_artifact(test::conformance_file("a.txt"), *bundle, refuse,
                            production_trusted_root()).error().message,
            "not this signer");
  // A wrong artifact with an accepting rule fails later, at the digest.
  EXPECT_EQ(verify_artifact("other bytes", *bundle, accept, production_trusted_root())
                .error().message,
            "Bundle message digest mismatch");
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

// Issue 20 item 8: every trusted-root key must be valid at the time it vouches for.

TEST(VerifyBundleVerifier, OurOwnCasesAreRefused) {
  for (const char* name : {"ctlog-key-not-yet-valid_fail", "rekor2-log-key-not-yet-valid_fail"}) {
    const auto dir = test::kernelhub_cases_dir() / name;
    auto bundle = parse_bundle(test::source_file(dir / "bundle.sigstore.json"));
    auto root = parse_trusted_root(test::source_file(dir / "trusted_root.json"));
    ASSERT_TRUE(bundle && root) << name;
    auto verified = verify_artifact(test::conformance_file("a.txt"), *bundle,
                                    std::vector{test::conformance_policy()}, *root);
    EXPECT_FALSE(verified) << name;
  }
}

TEST(VerifyBundleVerifier, ACtLogKeyVouchesOnlyInsideItsWindow) {
  const auto production = nlohmann::json::parse(test::production_root_json());
  EXPECT_EQ(verdict_under("happy-path-v0.3", production), "ok");
  const auto with_window = [&](const char* field, const char* time) {
    auto root = production;
    log_with_key(root["ctlogs"], k_ct_log)["publicKey"]["validFor"][field] = time;
    return verdict_under("happy-path-v0.3", root);
  };
  const std::string refused = "failed to verify SCT on signing certificate: the CT log's key (id "
                              "\"dd3d306ac6c7113263191e1c99673702a24a5eb8de3cadff878a72802f29ee8e\") "
                              "was not valid at the SCT's time";
  // Starting after now: sigstore 4.5.1 refuses too (the stored case).
  EXPECT_EQ(with_window("start", "2099-01-01T00:00:00Z"), refused);
  // Starting after the SCT but before now, or ended before it: 4.5.1 uses the key; deliberately
  // refused here.
  EXPECT_EQ(with_window("start", "2024-03-20T00:00:00Z"), refused);
  EXPECT_EQ(with_window("end", "2024-03-19T17:26:25Z"), refused);
  // Both ends hold the SCT's second.
  EXPECT_EQ(with_window("start", "2024-03-19T17:26:26Z"), "ok");
  EXPECT_EQ(with_window("end", "2024-03-19T17:26:26Z"), "ok");
}

TEST(VerifyBundleVerifier, ARekorV2KeyVouchesOnlyAtTheTimestampsTimes) {
  const auto own =
      nlohmann::json::parse(test::conformance_file("rekor2-happy-path/trusted_root.json"));
  EXPECT_EQ(verdict_under("rekor2-happy-path", own), "ok");
  const auto with_window = [&](const char* field, const char* time) {
    auto root = own;
    log_with_key(root["tlogs"], k_rekor2_log)["publicKey"]["validFor"][field] = time;
    return verdict_under("rekor2-happy-path", root);
  };
  const std::string refused =
      "invalid log entry: the log's key was not valid at the signed timestamp's time";
  EXPECT_EQ(with_window("start", "2099-01-01T00:00:00Z"), refused);  // 4.5.1 refuses too
  EXPECT_EQ(with_window("start", "2025-06-13T00:00:00Z"), refused);  // deliberately stricter
  EXPECT_EQ(with_window("end", "2025-06-11T00:00:00Z"), refused);    // deliberately stricter
}

TEST(VerifyBundleVerifier, FulcioAndRekorV1WindowsAreJudgedAtTheSigningTimeOnPurpose) {
  // 4.5.1 keeps a CA or a Rekor key whose window ended (allow_expired): both are refused here.
  const auto production = nlohmann::json::parse(test::production_root_json());
  auto rekor = production;
  log_with_key(rekor["tlogs"], "\xc0\xd2\x3d\x6a")["publicKey"]["validFor"]["end"] =
      "2024-03-19T17:26:25Z";
  EXPECT_EQ(verdict_under("happy-path-v0.3", rekor),
            "invalid log entry: the log's key was not valid at the entry's integrated time");
  auto fulcio = production;
  for (auto& authority : fulcio["certificateAuthorities"]) {
    authority["validFor"]["end"] = "2024-03-19T17:26:25Z";
  }
  EXPECT_NE(verdict_under("happy-path-v0.3", fulcio).find("failed to build chain"), std::string::npos);
}
