// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <kernelhub/util/expected.hpp>

// The few cryptographic primitives Sigstore verification needs, over OpenSSL. Byte strings are
// std::string (raw bytes, not text). OpenSSL types stay opaque here so that only the verify
// layer's .cpp files include OpenSSL headers.
typedef struct x509_st X509;
typedef struct evp_pkey_st EVP_PKEY;

namespace kernelhub::verify {

using Certificate = std::shared_ptr<X509>;
using PublicKey = std::shared_ptr<EVP_PKEY>;

// Standard-alphabet base64 with padding, as protobuf's JSON mapping writes bytes. CR and LF are
// skipped (one conformance bundle wraps its base64 at 76 columns); any other character outside
// the alphabet, a missing pad or a stray pad is an error.
util::Expected<std::string> base64_decode(std::string_view text);
std::string base64_encode(std::string_view bytes);
std::string hex_lower(std::string_view bytes);

std::string sha256(std::string_view bytes);

// A DER X.509 certificate; fails with OpenSSL's reason when it does not parse.
util::Expected<Certificate> parse_certificate_der(std::string_view der);
std::string certificate_der(X509* certificate);
// The PEM text Python's `cryptography` writes: 64-column base64 lines, a trailing newline.
std::string certificate_pem(X509* certificate);
// A DER SubjectPublicKeyInfo, or a bare PKCS#1 RSAPublicKey (the staging root's old CT key).
util::Expected<PublicKey> parse_public_key_der(std::string_view der);
std::string public_key_spki_der(EVP_PKEY* key);

enum class Prehash { none, sha256 };

// Checks `signature` over `message` with `key`: ECDSA (DER Ecdsa-Sig-Value) and RSA PKCS#1 v1.5
// with SHA-256, Ed25519 over the message itself. With Prehash::sha256, `message` is already the
// SHA-256 digest (the bundle's signature over metadata.json is checked that way, as 4.5.1 does).
bool verify_signature(EVP_PKEY* key, std::string_view message, std::string_view signature,
                      Prehash prehash = Prehash::none);

// RFC 3339 ("2021-03-07T03:20:29.000Z", fractional seconds and offsets allowed) to Unix seconds.
std::optional<std::int64_t> parse_rfc3339(std::string_view text);

}  // namespace kernelhub::verify
