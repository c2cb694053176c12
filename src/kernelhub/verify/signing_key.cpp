// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/verify/signing_key.hpp>

#include <memory>

#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <kernelhub/util/file_io.hpp>
#include <kernelhub/verify/trusted_key.hpp>

namespace kernelhub::verify {

namespace {

using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(size));
}

// OpenSSL asks for a passphrase through this; answering none makes an encrypted key fail to
// load instead of prompting on a terminal in the middle of a build.
int no_passphrase(char*, int, int, void* asked) {
  *static_cast<bool*>(asked) = true;
  return -1;
}

}  // namespace

util::Expected<std::string> SigningKey::sign(std::string_view message) const {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                  &EVP_MD_CTX_free);
  const EVP_MD* md = EVP_PKEY_get_base_id(m_key.get()) == EVP_PKEY_ED25519 ? nullptr : EVP_sha256();
  const auto* data = reinterpret_cast<const unsigned char*>(message.data());
  std::size_t size = 0;
  if (!context || EVP_DigestSignInit(context.get(), nullptr, md, nullptr, m_key.get()) != 1 ||
      EVP_DigestSign(context.get(), nullptr, &size, data, message.size()) != 1) {
    ERR_clear_error();
    return util::fail("signing failed: the key cannot sign");
  }
  std::string signature(size, '\0');
  if (EVP_DigestSign(context.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                     data, message.size()) != 1) {
    ERR_clear_error();
    return util::fail("signing failed");
  }
  signature.resize(size);  // DER ECDSA signatures vary in length
  return signature;
}

std::string SigningKey::private_pem() const {
  Bio out(BIO_new(BIO_s_mem()), &BIO_free);
  if (!out ||
      PEM_write_bio_PrivateKey(out.get(), m_key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    ERR_clear_error();
    return {};
  }
  return bio_text(out.get());
}

std::string SigningKey::public_pem() const { return public_key_pem(m_key.get()); }

std::string SigningKey::hint() const { return key_hint(m_key.get()); }

util::Expected<SigningKey> parse_signing_key(std::string_view pem, std::string_view source) {
  Bio in(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  bool asked = false;
  EVP_PKEY* raw = in ? PEM_read_bio_PrivateKey(in.get(), nullptr, &no_passphrase, &asked) : nullptr;
  ERR_clear_error();
  if (raw == nullptr) {
    if (asked) {
      return util::fail(fmt::format(
          "{}: the private key is encrypted; write an unencrypted copy for signing "
          "(openssl pkey -in KEY -out PLAIN.pem) and keep it where only the build can read it",
          source));
    }
    return util::fail(fmt::format("{}: not a PEM private key", source));
  }
  SigningKey key(PublicKey(raw, &EVP_PKEY_free));
  if (auto supported = check_supported_key(key.get()); !supported) {
    return util::fail(fmt::format("{}: {}", source, supported.error().message));
  }
  return key;
}

util::Expected<SigningKey> load_signing_key(const std::filesystem::path& path) {
  const std::string text = KH_TRY(util::read_file(path));
  return parse_signing_key(text, fmt::format("\"{}\"", path.string()));
}

util::Expected<SigningKey> generate_signing_key(KeyAlgorithm algorithm) {
  EVP_PKEY* raw = algorithm == KeyAlgorithm::ed25519
                      ? EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519")
                      : EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  if (raw == nullptr) {
    ERR_clear_error();
    return util::fail("key generation failed");
  }
  return SigningKey(PublicKey(raw, &EVP_PKEY_free));
}

}  // namespace kernelhub::verify
