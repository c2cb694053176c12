// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <kernelhub/verify/bundle.hpp>

#include "verify_test_data.hpp"

using namespace kernelhub::verify;
using kernelhub::verify::test::conformance_file;
using nlohmann::json;

namespace {

std::string reason(const std::string& text) {
  auto parsed = parse_bundle(text);
  return parsed ? std::string("(parsed)") : parsed.error().message;
}

json happy_v03() { return json::parse(conformance_file("happy-path-v0.3/bundle.sigstore.json")); }

}  // namespace

TEST(VerifyBundle, ParsesEveryMediaTypeOfTheConformanceHappyPaths) {
  const std::pair<const char*, BundleVersion> cases[] = {
      {"happy-path-v0.1", BundleVersion::v0_1},
      {"happy-path-v0.2", BundleVersion::v0_2},
      {"happy-path-v0.3", BundleVersion::v0_3},
      {"happy-path-v0.3-new-mediaType", BundleVersion::v0_3}};
  for (const auto& [name, version] : cases) {
    auto bundle = parse_bundle(conformance_file(std::string(name) + "/bundle.sigstore.json"));
    ASSERT_TRUE(bundle) << name << ": " << bundle.error().message;
    EXPECT_EQ(bundle->version, version) << name;
    EXPECT_TRUE(bundle->leaf) << name;
    EXPECT_TRUE(bundle->signature) << name;
    EXPECT_EQ(bundle->entry.kind, "hashedrekord") << name;
    EXPECT_TRUE(bundle->entry.signed_entry_timestamp) << name;
    EXPECT_FALSE(bundle->entry.proof.checkpoint.empty()) << name;
    EXPECT_LT(bundle->entry.proof.log_index, bundle->entry.proof.tree_size) << name;
  }
}

TEST(VerifyBundle, RefusesWhatSigstoreModelsRefuses) {
  json unknown = happy_v03();
  unknown["verificationMaterial"]["extra"] = 1;
  EXPECT_NE(reason(unknown.dump()).find("extra inputs are not permitted"), std::string::npos);

  json number = happy_v03();
  number["verificationMaterial"]["tlogEntries"][0]["logIndex"] = 25579;
  EXPECT_NE(reason(number.dump()).find("uint64 as string"), std::string::npos);

  json negative = happy_v03();
  negative["verificationMaterial"]["tlogEntries"][0]["logIndex"] = "-1";
  EXPECT_NE(reason(negative.dump()).find("not an unsigned 64-bit integer"), std::string::npos);

  json version = happy_v03();
  version["mediaType"] = "application/vnd.dev.sigstore.bundle+json;version=99.9";
  EXPECT_NE(reason(version.dump()).find("unsupported bundle format"), std::string::npos);

  json two = happy_v03();
  two["dsseEnvelope"] = {{"payload", ""}, {"payloadType", "x"}, {"signatures", json::array()}};
  EXPECT_NE(reason(two.dump()).find("exactly one of messageSignature"), std::string::npos);

  json no_proof = happy_v03();
  no_proof["verificationMaterial"]["tlogEntries"][0].erase("inclusionProof");
  EXPECT_NE(reason(no_proof.dump()).find("inclusionProof\": field required"), std::string::npos);

  json no_checkpoint = happy_v03();
  no_checkpoint["verificationMaterial"]["tlogEntries"][0]["inclusionProof"].erase("checkpoint");
  EXPECT_EQ(reason(no_checkpoint.dump()), "entry must contain inclusion proof, with checkpoint");

  json no_entries = happy_v03();
  no_entries["verificationMaterial"]["tlogEntries"] = json::array();
  EXPECT_EQ(reason(no_entries.dump()), "expected exactly one log entry in bundle");

  json keyed = happy_v03();
  keyed["verificationMaterial"].erase("certificate");
  keyed["verificationMaterial"]["publicKey"] = {{"hint", "abc"}};
  EXPECT_EQ(reason(keyed.dump()), "expected certificate in bundle");

  EXPECT_EQ(reason("{\"mediaType\": "), "failed to load bundle: invalid JSON");
}

TEST(VerifyBundle, ReadsSnakeCaseNamesAndNullAsAbsent) {
  json snake = happy_v03();
  snake["verification_material"] = snake["verificationMaterial"];
  snake.erase("verificationMaterial");
  snake["dsseEnvelope"] = nullptr;
  EXPECT_EQ(reason(snake.dump()), "(parsed)");
}

TEST(VerifyBundle, ConformanceParseFailures) {
  EXPECT_EQ(reason(conformance_file("bundle-with-root-cert_fail/bundle.sigstore.json")),
            "entry must contain inclusion proof, with checkpoint");
  EXPECT_EQ(reason(conformance_file("bundle-empty-certificate-chain_fail/bundle.sigstore.json")),
            "expected non-empty certificate chain in bundle");
  EXPECT_NE(reason(conformance_file("bundle-invalid-base64-signature_fail/bundle.sigstore.json"))
                .find("invalid base64"),
            std::string::npos);
  EXPECT_NE(reason(conformance_file("bundle-unknown-version_fail/bundle.sigstore.json"))
                .find("unsupported bundle format"),
            std::string::npos);
}
