// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/verify/crypto.hpp>

#include <array>
#include <cctype>
#include <charconv>
#include <ctime>

#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

namespace kernelhub::verify {

namespace {

constexpr std::string_view k_alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int alphabet_index(char c) {
  const auto at = k_alphabet.find(c);
  return at == std::string_view::npos ? -1 : static_cast<int>(at);
}

std::string openssl_reason() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) {
    return "unknown OpenSSL error";
  }
  std::array<char, 256> text{};
  ERR_error_string_n(code, text.data(), text.size());
  return text.data();
}

}  // namespace

util::Expected<std::string> base64_decode(std::string_view text) {
  std::string clean;
  clean.reserve(text.size());
  for (const char c : text) {
    if (c != '\n' && c != '\r') {
      clean.push_back(c);
    }
  }
  if (clean.size() % 4 != 0) {
    return util::fail(fmt::format("invalid base64 \"{}\": length is not a multiple of 4",
                                  clean.substr(0, 40)));
  }
  std::string out;
  out.reserve(clean.size() / 4 * 3);
  for (std::size_t i = 0; i < clean.size(); i += 4) {
    std::array<int, 4> v{};
    int pads = 0;
    for (int j = 0; j < 4; ++j) {
      const char c = clean[i + j];
      if (c == '=') {
        // Padding only in the last group's last two places, and never before a data character.
        if (i + 4 != clean.size() || j < 2) {
          return util::fail(fmt::format("invalid base64 \"{}\": misplaced padding",
                                        clean.substr(0, 40)));
        }
        ++pads;
        v[j] = 0;
        continue;
      }
      if (pads > 0) {
        return util::fail(fmt::format("invalid base64 \"{}\": data after padding",
                                      clean.substr(0, 40)));
      }
      v[j] = alphabet_index(c);
      if (v[j] < 0) {
        return util::fail(fmt::format("invalid base64 \"{}\": unexpected character '{}'",
                                      clean.substr(0, 40), c));
      }
    }
    const unsigned triple = (static_cast<unsigned>(v[0]) << 18) |
                            (static_cast<unsigned>(v[1]) << 12) |
                            (static_cast<unsigned>(v[2]) << 6) | static_cast<unsigned>(v[3]);
    out.push_back(static_cast<char>((triple >> 16) & 0xff));
    if (pads < 2) {
      out.push_back(static_cast<char>((triple >> 8) & 0xff));
    }
    if (pads < 1) {
      out.push_back(static_cast<char>(triple & 0xff));
    }
  }
  return out;
}

std::string base64_encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int written =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                      reinterpret_cast<const unsigned char*>(bytes.data()),
                      static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(written));
  return out;
}

std::string hex_lower(std::string_view bytes) {
  static constexpr std::string_view k_digits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    out.push_back(k_digits[byte >> 4]);
    out.push_back(k_digits[byte & 0x0f]);
  }
  return out;
}

std::string sha256(std::string_view bytes) {
  std::string out(32, '\0');
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), reinterpret_cast<unsigned char*>(out.data()), &size,
             EVP_sha256(), nullptr);
  return out;
}

util::Expected<Certificate> parse_certificate_der(std::string_view der) {
  const auto* cursor = reinterpret_cast<const unsigned char*>(der.data());
  X509* parsed = d2i_X509(nullptr, &cursor, static_cast<long>(der.size()));
  if (parsed == nullptr) {
    return util::fail(fmt::format("invalid DER certificate: {}", openssl_reason()));
  }
  Certificate certificate(parsed, &X509_free);
  // Trailing bytes after the certificate mean the input was not one certificate.
  if (cursor != reinterpret_cast<const unsigned char*>(der.data()) + der.size()) {
    return util::fail("invalid DER certificate: trailing data");
  }
  return certificate;
}

std::string certificate_der(X509* certificate) {
  unsigned char* buffer = nullptr;
  const int size = i2d_X509(certificate, &buffer);
  if (size <= 0) {
    return {};
  }
  std::string out(reinterpret_cast<char*>(buffer), static_cast<std::size_t>(size));
  OPENSSL_free(buffer);
  return out;
}

std::string certificate_pem(X509* certificate) {
  const std::string encoded = base64_encode(certificate_der(certificate));
  std::string out = "-----BEGIN CERTIFICATE-----\n";
  for (std::size_t at = 0; at < encoded.size(); at += 64) {
    out += encoded.substr(at, 64);
    out += '\n';
  }
  out += "-----END CERTIFICATE-----\n";
  return out;
}

util::Expected<PublicKey> parse_public_key_der(std::string_view der) {
  const auto* cursor = reinterpret_cast<const unsigned char*>(der.data());
  EVP_PKEY* key = d2i_PUBKEY(nullptr, &cursor, static_cast<long>(der.size()));
  if (key == nullptr) {
    ERR_clear_error();
    cursor = reinterpret_cast<const unsigned char*>(der.data());
    key = d2i_PublicKey(EVP_PKEY_RSA, nullptr, &cursor, static_cast<long>(der.size()));
  }
  if (key == nullptr) {
    return util::fail(fmt::format("invalid public key: {}", openssl_reason()));
  }
  return PublicKey(key, &EVP_PKEY_free);
}

std::string public_key_spki_der(EVP_PKEY* key) {
  unsigned char* buffer = nullptr;
  const int size = i2d_PUBKEY(key, &buffer);
  if (size <= 0) {
    return {};
  }
  std::string out(reinterpret_cast<char*>(buffer), static_cast<std::size_t>(size));
  OPENSSL_free(buffer);
  return out;
}

bool verify_signature(EVP_PKEY* key, std::string_view message, std::string_view signature,
                      Prehash prehash) {
  const auto* sig = reinterpret_cast<const unsigned char*>(signature.data());
  const auto* data = reinterpret_cast<const unsigned char*>(message.data());
  const int type = EVP_PKEY_get_base_id(key);
  bool ok = false;
  if (prehash == Prehash::sha256) {
    if (type == EVP_PKEY_ED25519) {
      return false;  // EdDSA signs messages, never digests
    }
    std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> context(
        EVP_PKEY_CTX_new(key, nullptr), &EVP_PKEY_CTX_free);
    ok = context && EVP_PKEY_verify_init(context.get()) == 1 &&
         (type != EVP_PKEY_RSA ||
          EVP_PKEY_CTX_set_rsa_padding(context.get(), RSA_PKCS1_PADDING) == 1) &&
         EVP_PKEY_CTX_set_signature_md(context.get(), EVP_sha256()) == 1 &&
         EVP_PKEY_verify(context.get(), sig, signature.size(), data, message.size()) == 1;
  } else {
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                    &EVP_MD_CTX_free);
    const EVP_MD* md = type == EVP_PKEY_ED25519 ? nullptr : EVP_sha256();
    ok = context && EVP_DigestVerifyInit(context.get(), nullptr, md, nullptr, key) == 1 &&
         EVP_DigestVerify(context.get(), sig, signature.size(), data, message.size()) == 1;
  }
  ERR_clear_error();
  return ok;
}

std::optional<std::int64_t> parse_rfc3339(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)
  auto number = [&](std::size_t at, std::size_t width) -> std::optional<int> {
    if (at + width > text.size()) {
      return std::nullopt;
    }
    int value = 0;
    for (std::size_t i = at; i < at + width; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
        return std::nullopt;
      }
      value = value * 10 + (text[i] - '0');
    }
    return value;
  };
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != 't') || text[13] != ':' || text[16] != ':') {
    return std::nullopt;
  }
  const auto year = number(0, 4);
  const auto month = number(5, 2);
  const auto day = number(8, 2);
  const auto hour = number(11, 2);
  const auto minute = number(14, 2);
  const auto second = number(17, 2);
  if (!year || !month || !day || !hour || !minute || !second || *month < 1 || *month > 12 ||
      *day < 1 || *day > 31 || *hour > 23 || *minute > 59 || *second > 60) {
    return std::nullopt;
  }
  std::size_t at = 19;
  if (at < text.size() && text[at] == '.') {
    ++at;
    const std::size_t digits_from = at;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) {
      ++at;
    }
    if (at == digits_from) {
      return std::nullopt;
    }
  }
  std::int64_t offset = 0;
  if (at < text.size() && (text[at] == 'Z' || text[at] == 'z') && at + 1 == text.size()) {
    offset = 0;
  } else if (at + 6 == text.size() && (text[at] == '+' || text[at] == '-') &&
             text[at + 3] == ':') {
    const auto off_hour = number(at + 1, 2);
    const auto off_minute = number(at + 4, 2);
    if (!off_hour || !off_minute) {
      return std::nullopt;
    }
    offset = (*off_hour * 3600 + *off_minute * 60) * (text[at] == '+' ? 1 : -1);
  } else {
    return std::nullopt;
  }
  std::tm parts{};
  parts.tm_year = *year - 1900;
  parts.tm_mon = *month - 1;
  parts.tm_mday = *day;
  parts.tm_hour = *hour;
  parts.tm_min = *minute;
  parts.tm_sec = *second;
  return static_cast<std::int64_t>(timegm(&parts)) - offset;
}

}  // namespace kernelhub::verify
