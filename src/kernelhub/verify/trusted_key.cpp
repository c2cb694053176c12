// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/verify/trusted_key.hpp>

#include <memory>

#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <kernelhub/util/file_io.hpp>

namespace kernelhub::verify {

namespace {

constexpr std::string_view k_begin = "-----BEGIN PUBLIC KEY-----";
constexpr std::string_view k_end = "-----END PUBLIC KEY-----";

std::string curve_name(EVP_PKEY* key) {
  char name[64] = {};
  std::size_t length = 0;
  if (EVP_PKEY_get_utf8_string_param(key, "group", name, sizeof(name), &length) != 1) {
    ERR_clear_error();
    return {};
  }
  return std::string(name, length);
}

}  // namespace

std::string key_description(EVP_PKEY* key) {
  switch (EVP_PKEY_get_base_id(key)) {
    case EVP_PKEY_EC: {
      const std::string curve = curve_name(key);
      return curve == "prime256v1" ? "ECDSA P-256" : "ECDSA " + curve;
    }
    case EVP_PKEY_ED25519:
      return "Ed25519";
    case EVP_PKEY_RSA:
      return fmt::format("RSA {}", EVP_PKEY_get_bits(key));
    default:
      return fmt::format("key type {}", EVP_PKEY_get_base_id(key));
  }
}

util::Expected<void> check_supported_key(EVP_PKEY* key) {
  const int type = EVP_PKEY_get_base_id(key);
  if (type == EVP_PKEY_ED25519) {
    return {};
  }
  if (type == EVP_PKEY_EC && curve_name(key) == "prime256v1") {
    return {};
  }
  if (type == EVP_PKEY_RSA && EVP_PKEY_get_bits(key) >= 2048) {
    return {};
  }
  return util::fail(fmt::format(
      "unsupported key \"{}\"; use ECDSA P-256, Ed25519 or RSA of 2048 bits or more",
      key_description(key)));
}

std::string key_hint(EVP_PKEY* key) { return base64_encode(sha256(public_key_spki_der(key))); }

std::string public_key_pem(EVP_PKEY* key) {
  std::unique_ptr<BIO, decltype(&BIO_free)> out(BIO_new(BIO_s_mem()), &BIO_free);
  if (!out || PEM_write_bio_PUBKEY(out.get(), key) != 1) {
    ERR_clear_error();
    return {};
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

util::Expected<std::vector<TrustedKey>> parse_trusted_keys(std::string_view text,
                                                           std::string_view source) {
  std::vector<TrustedKey> keys;
  std::size_t at = 0;
  while ((at = text.find(k_begin, at)) != std::string_view::npos) {
    const std::size_t end = text.find(k_end, at);
    if (end == std::string_view::npos) {
      return util::fail(fmt::format("{}: unterminated \"{}\" block", source, k_begin));
    }
    const std::string block(text.substr(at, end + k_end.size() - at));
    at = end + k_end.size();
    std::unique_ptr<BIO, decltype(&BIO_free)> in(
        BIO_new_mem_buf(block.data(), static_cast<int>(block.size())), &BIO_free);
    EVP_PKEY* raw = in ? PEM_read_bio_PUBKEY(in.get(), nullptr, nullptr, nullptr) : nullptr;
    if (raw == nullptr) {
      ERR_clear_error();
      return util::fail(fmt::format("{}: public key {} does not parse", source, keys.size() + 1));
    }
    PublicKey key(raw, &EVP_PKEY_free);
    if (auto supported = check_supported_key(key.get()); !supported) {
      return util::fail(fmt::format("{}: {}", source, supported.error().message));
    }
    keys.push_back({key, key_hint(key.get()), public_key_pem(key.get()), std::string(source)});
  }
  if (keys.empty()) {
    return util::fail(fmt::format("{}: no \"{}\" block (a PEM public key, as `kernel-builder "
                                  "keygen` or `openssl pkey -pubout` writes)",
                                  source, k_begin));
  }
  return keys;
}

util::Expected<std::vector<TrustedKey>> load_trusted_keys(const std::filesystem::path& path) {
  const std::string text = KH_TRY(util::read_file(path));
  return parse_trusted_keys(text, fmt::format("\"{}\"", path.string()));
}

}  // namespace kernelhub::verify
