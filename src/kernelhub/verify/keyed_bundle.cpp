// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/verify/keyed_bundle.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kernelhub::verify {

util::Expected<std::string> write_keyed_bundle(std::string_view artifact, const SigningKey& key) {
  const std::string signature = KH_TRY(key.sign(artifact));
  // Key order as sigstore-go and cosign emit it, so a diff against theirs stays small.
  nlohmann::ordered_json bundle = {
      {"mediaType", "application/vnd.dev.sigstore.bundle.v0.3+json"},
      {"verificationMaterial",
       {{"publicKey", {{"hint", key.hint()}}}, {"tlogEntries", nlohmann::ordered_json::array()}}},
      {"messageSignature",
       {{"messageDigest", {{"algorithm", "SHA2_256"}, {"digest", base64_encode(sha256(artifact))}}},
        {"signature", base64_encode(signature)}}},
  };
  return bundle.dump(2) + "\n";
}

util::Expected<const TrustedKey*> verify_keyed_artifact(std::string_view artifact, const KeyedBundle& bundle,
                                           std::span<const TrustedKey> keys) {
  if (keys.empty()) {
    return util::fail("the bundle is signed with a key, and no key is trusted");
  }
  std::vector<const TrustedKey*> candidates;
  for (const TrustedKey& key : keys) {
    if (!bundle.hint || *bundle.hint == key.hint) {
      candidates.push_back(&key);
    }
  }
  if (candidates.empty()) {
    return util::fail(fmt::format("signed with key \"{}\", which is not a trusted key ({} trusted)",
                                  *bundle.hint, keys.size()));
  }
  // Cheap, and it names a changed artifact as such instead of as a bad signature.
  if (bundle.message_digest && *bundle.message_digest != sha256(artifact)) {
    return util::fail("the artifact's SHA-256 digest does not match the bundle's messageDigest");
  }
  for (const TrustedKey* key : candidates) {
    if (verify_signature(key->key.get(), artifact, bundle.signature)) {
      return key;
    }
  }
  return util::fail(bundle.hint ? fmt::format("the signature does not verify with trusted key "
                                              "\"{}\" ({})",
                                              *bundle.hint, candidates.front()->source)
                                : std::string("the signature does not verify with any trusted key"));
}

}  // namespace kernelhub::verify
