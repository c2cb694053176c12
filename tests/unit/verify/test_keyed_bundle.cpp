// SPDX-License-Identifier: Apache-2.0
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../loader/loader_test_support.hpp"
#include <kernelhub/metadata/metadata.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>
#include <kernelhub/util/file_io.hpp>
#include <kernelhub/verify/keyed_bundle.hpp>
#include <kernelhub/verify/signed_variant.hpp>

using namespace kernelhub;
using namespace kernelhub::verify;
namespace fs = std::filesystem;
using loader::testing::metadata_json;
using loader::testing::write;

namespace {

const std::string k_artifact = "{\"id\": \"_relu_cpu_1\", \"version\": 1}\n";

SigningKey new_key(KeyAlgorithm algorithm) {
  auto key = generate_signing_key(algorithm);
  EXPECT_TRUE(key) << key.error().message;
  return *key;
}

std::vector<TrustedKey> trusting(const SigningKey& key) {
  auto keys = parse_trusted_keys(key.public_pem(), "test");
  EXPECT_TRUE(keys) << keys.error().message;
  return *keys;
}

util::Expected<const TrustedKey*> check(std::string_view artifact, const std::string& bundle_json,
                                        const std::vector<TrustedKey>& keys) {
  auto bundle = parse_keyed_bundle(bundle_json);
  EXPECT_TRUE(bundle) << bundle.error().message;
  return verify_keyed_artifact(artifact, *bundle, keys);
}

}  // namespace

class KeyedBundleRoundTrip : public ::testing::TestWithParam<KeyAlgorithm> {};

TEST_P(KeyedBundleRoundTrip, SignedArtifactVerifiesAndAnyChangedByteFails) {
  const SigningKey key = new_key(GetParam());
  const std::string bundle = *write_keyed_bundle(k_artifact, key);
  const auto keys = trusting(key);

  const auto signer = check(k_artifact, bundle, keys);
  ASSERT_TRUE(signer) << signer.error().message;
  EXPECT_EQ((*signer)->hint, key.hint());

  // Every position, not one chosen to hit: the signature must cover all of the bytes.
  for (std::size_t at = 0; at < k_artifact.size(); ++at) {
    std::string changed = k_artifact;
    changed[at] = static_cast<char>(changed[at] ^ 0x01);
    EXPECT_FALSE(check(changed, bundle, keys)) << "byte " << at;
  }
}

TEST_P(KeyedBundleRoundTrip, WithoutTheDigestHintTheSignatureStillDecides) {
  const SigningKey key = new_key(GetParam());
  auto document = nlohmann::json::parse(*write_keyed_bundle(k_artifact, key));
  document["messageSignature"].erase("messageDigest");
  const auto keys = trusting(key);
  EXPECT_TRUE(check(k_artifact, document.dump(), keys));
  const auto changed = check(k_artifact + " ", document.dump(), keys);
  ASSERT_FALSE(changed);
  EXPECT_NE(changed.error().message.find("does not verify"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, KeyedBundleRoundTrip,
                         ::testing::Values(KeyAlgorithm::ecdsa_p256, KeyAlgorithm::ed25519));

TEST(KeyedBundle, HasTheShapeOfCosignsKeyedBundles) {
  const SigningKey key = new_key(KeyAlgorithm::ecdsa_p256);
  const auto document = nlohmann::json::parse(*write_keyed_bundle(k_artifact, key));
  EXPECT_EQ(document["mediaType"], "application/vnd.dev.sigstore.bundle.v0.3+json");
  EXPECT_EQ(document["verificationMaterial"]["publicKey"]["hint"], key.hint());
  EXPECT_EQ(document["verificationMaterial"]["tlogEntries"], nlohmann::json::array());
  EXPECT_EQ(document["messageSignature"]["messageDigest"]["algorithm"], "SHA2_256");
  EXPECT_EQ(*base64_decode(document["messageSignature"]["messageDigest"]["digest"].get<std::string>()),
            sha256(k_artifact));
  // The hint is the key's SPKI hash, so it names this key and no other.
  EXPECT_EQ(*base64_decode(key.hint()), sha256(public_key_spki_der(key.get())));
  EXPECT_NE(key.hint(), new_key(KeyAlgorithm::ecdsa_p256).hint());
}

TEST(KeyedBundle, AnotherKeyIsRefusedByItsHintAndByItsSignature) {
  const SigningKey trusted = new_key(KeyAlgorithm::ecdsa_p256);
  const SigningKey other = new_key(KeyAlgorithm::ecdsa_p256);
  const auto keys = trusting(trusted);
  const std::string bundle = *write_keyed_bundle(k_artifact, other);

  const auto by_hint = check(k_artifact, bundle, keys);
  ASSERT_FALSE(by_hint);
  EXPECT_NE(by_hint.error().message.find(other.hint()), std::string::npos);
  EXPECT_NE(by_hint.error().message.find("not a trusted key"), std::string::npos);

  // The hint is unauthenticated: claiming the trusted key's hint must not help.
  auto forged = nlohmann::json::parse(bundle);
  forged["verificationMaterial"]["publicKey"]["hint"] = trusted.hint();
  EXPECT_FALSE(check(k_artifact, forged.dump(), keys));
  forged["verificationMaterial"]["publicKey"].erase("hint");
  EXPECT_FALSE(check(k_artifact, forged.dump(), keys));

  // With no key trusted at all, nothing passes.
  EXPECT_FALSE(check(k_artifact, *write_keyed_bundle(k_artifact, trusted), {}));
}

TEST(KeyedBundle, AnEd25519SignatureIsNotCheckedWithAnEcdsaKeysAlgorithm) {
  const SigningKey ed = new_key(KeyAlgorithm::ed25519);
  const SigningKey ec = new_key(KeyAlgorithm::ecdsa_p256);
  auto bundle = nlohmann::json::parse(*write_keyed_bundle(k_artifact, ed));
  bundle["verificationMaterial"]["publicKey"]["hint"] = ec.hint();
  EXPECT_FALSE(check(k_artifact, bundle.dump(), trusting(ec)));
}

TEST(KeyedBundle, ReaderRefusesWhatItCannotCheck) {
  const SigningKey key = new_key(KeyAlgorithm::ecdsa_p256);
  const auto good = nlohmann::json::parse(*write_keyed_bundle(k_artifact, key));
  EXPECT_TRUE(names_public_key(good.dump()));
  EXPECT_TRUE(parse_keyed_bundle(good.dump()));

  auto with_entry = good;
  with_entry["verificationMaterial"]["tlogEntries"].push_back(nlohmann::json::object());
  const auto entry = parse_keyed_bundle(with_entry.dump());
  ASSERT_FALSE(entry);
  EXPECT_NE(entry.error().message.find("transparency-log"), std::string::npos);

  auto unknown = good;
  unknown["verificationMaterial"]["publicKey"]["keyId"] = "x";
  EXPECT_FALSE(parse_keyed_bundle(unknown.dump()));

  auto sha512 = good;
  sha512["messageSignature"]["messageDigest"]["algorithm"] = "SHA2_512";
  EXPECT_FALSE(parse_keyed_bundle(sha512.dump()));

  auto bad_base64 = good;
  bad_base64["messageSignature"]["signature"] = "not base64!";
  EXPECT_FALSE(parse_keyed_bundle(bad_base64.dump()));

  // Still refused by the strict (certificate) reader, as sigstore 4.5.1 refuses it.
  const auto strict = parse_bundle(good.dump());
  ASSERT_FALSE(strict);
  EXPECT_EQ(strict.error().message, "expected certificate in bundle");
}

TEST(TrustedKeys, EveryBlockOfAFileIsAKeyAndGarbageIsNot) {
  const SigningKey first = new_key(KeyAlgorithm::ecdsa_p256);
  const SigningKey second = new_key(KeyAlgorithm::ed25519);
  const auto keys =
      parse_trusted_keys("# team keys\n" + first.public_pem() + "\n" + second.public_pem(), "f");
  ASSERT_TRUE(keys) << keys.error().message;
  ASSERT_EQ(keys->size(), 2u);
  EXPECT_EQ((*keys)[0].hint, first.hint());
  EXPECT_EQ((*keys)[1].hint, second.hint());

  EXPECT_FALSE(parse_trusted_keys("no key here", "f"));
  EXPECT_FALSE(parse_trusted_keys("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
                                  "f"));
  // A private key is not a public key: a misconfigured file must not be read as trust.
  EXPECT_FALSE(parse_trusted_keys(first.private_pem(), "f"));
}

TEST(SigningKeys, PemRoundTripKeepsTheKey) {
  const SigningKey key = new_key(KeyAlgorithm::ed25519);
  write("keys/team.pem", key.private_pem());
  const auto loaded = load_signing_key("keys/team.pem");
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->hint(), key.hint());
  EXPECT_FALSE(parse_signing_key(key.public_pem(), "pub"));
}

TEST(KeyedSignedVariant, TrustedKeyPassesOtherKeyAndChangedFilesDoNot) {
  write("v/relu/__init__.py", "from ._ops import ops\n");
  auto meta = *metadata::parse_metadata(metadata_json("relu", "_relu_cpu_1"));
  meta.digest = *metadata::hash_variant(metadata::DigestAlgorithm::sha256, "v");
  ASSERT_TRUE(metadata::write_metadata_file("v/metadata.json", meta));
  const SigningKey key = new_key(KeyAlgorithm::ecdsa_p256);
  write("v/metadata.json.sigstore", *write_keyed_bundle(*util::read_file("v/metadata.json"), key));
  const auto keys = trusting(key);

  const auto good = verify_signed_variant("v", {}, production_trusted_root(), keys);
  EXPECT_EQ(good.status, SignatureStatus::success) << good.reason;
  EXPECT_EQ(good.key_hint, key.hint());

  // Without keys: the reference's verdict on a keyed bundle.
  const auto keyless = verify_signed_variant("v", {}, production_trusted_root(), {});
  EXPECT_EQ(keyless.status, SignatureStatus::bundle_invalid);
  EXPECT_EQ(keyless.reason, "expected certificate in bundle");

  const auto other = verify_signed_variant("v", {}, production_trusted_root(),
                                           trusting(new_key(KeyAlgorithm::ecdsa_p256)));
  EXPECT_EQ(other.status, SignatureStatus::signature_failure);

  write("v/relu/__init__.py", "import os\n");
  const auto changed = verify_signed_variant("v", {}, production_trusted_root(), keys);
  EXPECT_EQ(changed.status, SignatureStatus::digest_mismatch);

  std::string metadata_bytes = *util::read_file("v/metadata.json");
  metadata_bytes.back() = ' ';
  write("v/metadata.json", metadata_bytes);
  EXPECT_EQ(verify_signed_variant("v", {}, production_trusted_root(), keys).status,
            SignatureStatus::signature_failure);
}
