// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/util/expected.hpp>
#include <kernelhub/verify/crypto.hpp>

// The public keys a private hub signs with (issue 14 item 3): a keyed Sigstore bundle names its
// key only by an unauthenticated hint, so the keys themselves come out of band, from files the
// deployment trusts or from the hub's trusted-keys endpoint.
namespace kernelhub::verify {

struct TrustedKey {
  PublicKey key;
  // std-base64 of SHA-256 over the DER SubjectPublicKeyInfo: what cosign and sigstore-go write
  // as verificationMaterial.publicKey.hint.
  std::string hint;
  std::string pem;     // -----BEGIN PUBLIC KEY----- text, as written by public_key_pem
  std::string source;  // where it came from (a file, "hub <endpoint>"), for messages
};

// The key types signing and verification accept: ECDSA P-256 (SHA-256), Ed25519 and RSA of at
// least 2048 bits (PKCS#1 v1.5, SHA-256). Other curves would need another hash than the bundle's
// SHA2_256 digest, so they are refused rather than verified with a mismatched hash.
util::Expected<void> check_supported_key(EVP_PKEY* key);
// "ECDSA P-256", "Ed25519", "RSA 3072"
std::string key_description(EVP_PKEY* key);

std::string key_hint(EVP_PKEY* key);
std::string public_key_pem(EVP_PKEY* key);

// Every PUBLIC KEY block of `text` (a file may hold several, e.g. during a key rotation); text
// outside the blocks is ignored, a block that does not parse or a key type that is not
// supported is an error naming `source`, and no block at all is an error.
util::Expected<std::vector<TrustedKey>> parse_trusted_keys(std::string_view text,
                                                           std::string_view source);
util::Expected<std::vector<TrustedKey>> load_trusted_keys(const std::filesystem::path& path);

}  // namespace kernelhub::verify
