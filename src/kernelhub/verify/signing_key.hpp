// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <kernelhub/util/expected.hpp>
#include <kernelhub/verify/crypto.hpp>

// A team's private signing key (`kernel-builder sign --key`, `kernel-builder keygen`): the other
// half of TrustedKey. Lives in the verify layer so that the signature it makes and the check
// the loader runs share one definition of the algorithms.
namespace kernelhub::verify {

enum class KeyAlgorithm { ecdsa_p256, ed25519 };

class SigningKey {
 public:
  explicit SigningKey(PublicKey key) : m_key(std::move(key)) {}

  EVP_PKEY* get() const { return m_key.get(); }

  // The signature over `message` that a keyed bundle carries: ECDSA (DER) and RSA PKCS#1 v1.5
  // over SHA-256(message), Ed25519 over the message itself, as cosign and sigstore-go sign.
  util::Expected<std::string> sign(std::string_view message) const;

  std::string private_pem() const;  // unencrypted PKCS#8
  std::string public_pem() const;
  std::string hint() const;

 private:
  PublicKey m_key;  // EVP_PKEY holds both halves
};

// A PEM private key (PKCS#8, or the traditional EC/RSA forms OpenSSL writes) of a supported type.
// An encrypted key is refused with a hint, since signing runs unattended in builds.
util::Expected<SigningKey> load_signing_key(const std::filesystem::path& path);
util::Expected<SigningKey> parse_signing_key(std::string_view pem, std::string_view source);

util::Expected<SigningKey> generate_signing_key(KeyAlgorithm algorithm);

}  // namespace kernelhub::verify
