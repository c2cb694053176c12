// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/verify/signing_certificate.hpp>

#include <ctime>
#include <memory>

#include <fmt/format.h>
#include <openssl/asn1.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

namespace kernelhub::verify {

namespace {

constexpr std::string_view k_precert_signing_oid = "1.3.6.1.4.1.11129.2.4.4";

std::string oid_text(const ASN1_OBJECT* object) {
  char text[80] = {};
  OBJ_obj2txt(text, sizeof(text), object, 1);
  return text;
}

bool has_extended_usage(X509* certificate, std::string_view oid) {
  auto* usages = static_cast<EXTENDED_KEY_USAGE*>(
      X509_get_ext_d2i(certificate, NID_ext_key_usage, nullptr, nullptr));
  if (usages == nullptr) {
    return false;
  }
  bool found = false;
  for (int i = 0; i < sk_ASN1_OBJECT_num(usages); ++i) {
    found = found || oid_text(sk_ASN1_OBJECT_value(usages, i)) == oid;
  }
  EXTENDED_KEY_USAGE_free(usages);
  return found;
}

// A cursor over TLS-encoded bytes (RFC 5246 §4): big-endian integers, length-prefixed vectors.
class TlsReader {
 public:
  explicit TlsReader(std::string_view bytes) : m_bytes(bytes) {}

  bool read(std::size_t width, std::uint64_t& value) {
    if (m_bytes.size() < width) {
      return false;
    }
    value = 0;
    for (std::size_t i = 0; i < width; ++i) {
      value = (value << 8) | static_cast<unsigned char>(m_bytes[i]);
    }
    m_bytes.remove_prefix(width);
    return true;
  }

  bool vector(std::size_t length_width, std::string_view& out) {
    std::uint64_t length = 0;
    if (!read(length_width, length) || m_bytes.size() < length) {
      return false;
    }
    out = m_bytes.substr(0, length);
    m_bytes.remove_prefix(length);
    return true;
  }

  bool bytes(std::size_t count, std::string_view& out) {
    if (m_bytes.size() < count) {
      return false;
    }
    out = m_bytes.substr(0, count);
    m_bytes.remove_prefix(count);
    return true;
  }

  bool empty() const { return m_bytes.empty(); }

 private:
  std::string_view m_bytes;
};

void put_uint(std::string& out, std::uint64_t value, int width) {
  for (int shift = (width - 1) * 8; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

std::string extension_bytes(X509_EXTENSION* extension) {
  const ASN1_OCTET_STRING* data = X509_EXTENSION_get_data(extension);
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)),
                     static_cast<std::size_t>(ASN1_STRING_length(data)));
}

// Frees the stack only: its certificates belong to the trusted root.
struct StackFree {
  void operator()(STACK_OF(X509) * stack) const { sk_X509_free(stack); }
};

std::optional<std::int64_t> unix_time(const ASN1_TIME* time) {
  std::tm parts{};
  if (ASN1_TIME_to_tm(time, &parts) != 1) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(timegm(&parts));
}

}  // namespace

util::Expected<std::vector<Certificate>> verify_chain_at(const Certificate& leaf,
                                                         const TrustedRoot& root,
                                                         std::int64_t time) {
  std::string last_error = "no trusted certificate authority is valid at the signing time";
  for (const CertificateAuthority& authority : root.certificate_authorities) {
    if (!authority.valid_for.contains(time) || authority.chain.empty()) {
      continue;
    }
    std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)> store(X509_STORE_new(),
                                                                  &X509_STORE_free);
    std::unique_ptr<STACK_OF(X509), StackFree> untrusted(sk_X509_new_null());
    std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> context(
        X509_STORE_CTX_new(), &X509_STORE_CTX_free);
    if (!store || !untrusted || !context) {
      return util::fail("out of memory");
    }
    // Every certificate of the CA is a trust anchor (X509_V_FLAG_PARTIAL_CHAIN), as sigstore
    // 4.5.1's store holds them: the path then ends at the intermediate, whose own signature by
    // the root is part of the trusted root rather than of the bundle, and only the leaf's
    // signature is checked here (a P-384 verification costs ~0.4 ms with OpenSSL 3.0).
    for (const Certificate& certificate : authority.chain) {
      X509_STORE_add_cert(store.get(), certificate.get());
    }
    if (X509_STORE_CTX_init(context.get(), store.get(), leaf.get(), untrusted.get()) != 1) {
      return util::fail("cannot set up certificate verification");
    }
    X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(context.get());
    X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_PARTIAL_CHAIN);
    X509_VERIFY_PARAM_set_time(param, static_cast<time_t>(time));
    if (X509_verify_cert(context.get()) == 1) {
      STACK_OF(X509)* built = X509_STORE_CTX_get1_chain(context.get());
      std::vector<Certificate> chain;
      for (int i = 0; i < sk_X509_num(built); ++i) {
        chain.emplace_back(sk_X509_value(built, i), &X509_free);
      }
      sk_X509_free(built);  // the certificates' references moved into `chain`
      // Complete the path with the CA's certificates above the anchor it ended at, so the SCT
      // step can step over a precertificate signing certificate.
      for (std::size_t i = 0; i < authority.chain.size(); ++i) {
        if (X509_cmp(authority.chain[i].get(), chain.back().get()) == 0) {
          for (std::size_t j = i + 1; j < authority.chain.size(); ++j) {
            chain.push_back(authority.chain[j]);
          }
          break;
        }
      }
      return chain;
    }
    last_error = X509_verify_cert_error_string(X509_STORE_CTX_get_error(context.get()));
  }
  ERR_clear_error();
  return util::fail(fmt::format("failed to build chain to a trusted root: {}", last_error));
}

util::Expected<void> verify_embedded_sct(const std::vector<Certificate>& chain,
                                         const TrustedRoot& root) {
  if (chain.size() < 2) {
    return util::fail("no issuer certificate for the SCT");
  }
  X509* leaf = chain[0].get();
  const int at = X509_get_ext_by_NID(leaf, NID_ct_precert_scts, -1);
  if (at < 0) {
    return util::fail("no SCT list extension in the certificate");
  }
  // The extension's value is a DER OCTET STRING around the TLS-encoded SCT list.
  const std::string wrapped = extension_bytes(X509_get_ext(leaf, at));
  const auto* cursor = reinterpret_cast<const unsigned char*>(wrapped.data());
  ASN1_OCTET_STRING* inner = d2i_ASN1_OCTET_STRING(nullptr, &cursor,
                                                   static_cast<long>(wrapped.size()));
  if (inner == nullptr) {
    ERR_clear_error();
    return util::fail("malformed SCT list extension");
  }
  const std::string list_bytes(reinterpret_cast<const char*>(ASN1_STRING_get0_data(inner)),
                               static_cast<std::size_t>(ASN1_STRING_length(inner)));
  ASN1_OCTET_STRING_free(inner);

  TlsReader list_reader(list_bytes);
  std::string_view list;
  if (!list_reader.vector(2, list) || !list_reader.empty()) {
    return util::fail("malformed SCT list");
  }
  std::vector<std::string_view> scts;
  TlsReader items(list);
  while (!items.empty()) {
    std::string_view sct;
    if (!items.vector(2, sct)) {
      return util::fail("malformed SCT list");
    }
    scts.push_back(sct);
  }
  if (scts.size() != 1) {
    return util::fail(fmt::format("expected exactly one SCT, found {}", scts.size()));
  }

  TlsReader sct(scts.front());
  std::uint64_t version = 0;
  std::uint64_t timestamp = 0;
  std::uint64_t hash_algorithm = 0;
  std::uint64_t signature_algorithm = 0;
  std::string_view log_id;
  std::string_view extensions;
  std::string_view signature;
  if (!sct.read(1, version) || !sct.bytes(32, log_id) || !sct.read(8, timestamp) ||
      !sct.vector(2, extensions) || !sct.read(1, hash_algorithm) ||
      !sct.read(1, signature_algorithm) || !sct.vector(2, signature) || !sct.empty()) {
    return util::fail("malformed SCT");
  }
  if (version != 0) {
    return util::fail(fmt::format("unsupported SCT version {}", version));
  }
  if (hash_algorithm != 4) {
    return util::fail("SCT is not signed with SHA-256");
  }

  // The issuer whose key the precertificate names: the next certificate, unless that one is a
  // dedicated precertificate signing certificate, whose own issuer counts instead.
  std::size_t issuer_at = 1;
  if (has_extended_usage(chain[1].get(), k_precert_signing_oid)) {
    issuer_at = 2;
  }
  if (issuer_at >= chain.size()) {
    return util::fail("no issuer certificate for the SCT");
  }
  // The SPKI from the certificate's own structure: OpenSSL 3's key encoders are far slower.
  unsigned char* spki = nullptr;
  const int spki_size = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(chain[issuer_at].get()), &spki);
  if (spki_size <= 0) {
    ERR_clear_error();
    return util::fail("cannot encode the issuer's public key");
  }
  const std::string issuer_key_hash =
      sha256(std::string_view(reinterpret_cast<char*>(spki), static_cast<std::size_t>(spki_size)));
  OPENSSL_free(spki);

  std::unique_ptr<X509, decltype(&X509_free)> precert(X509_dup(leaf), &X509_free);
  X509_EXTENSION* removed = X509_delete_ext(precert.get(), at);
  X509_EXTENSION_free(removed);
  unsigned char* tbs_buffer = nullptr;
  const int tbs_size = i2d_re_X509_tbs(precert.get(), &tbs_buffer);
  if (tbs_size <= 0) {
    ERR_clear_error();
    return util::fail("cannot encode the precertificate");
  }
  const std::string tbs(reinterpret_cast<char*>(tbs_buffer), static_cast<std::size_t>(tbs_size));
  OPENSSL_free(tbs_buffer);

  std::string signed_data;
  put_uint(signed_data, 0, 1);  // sct_version v1
  put_uint(signed_data, 0, 1);  // signature_type certificate_timestamp
  put_uint(signed_data, timestamp, 8);
  put_uint(signed_data, 1, 2);  // entry_type precert_entry
  signed_data += issuer_key_hash;
  put_uint(signed_data, tbs.size(), 3);
  signed_data += tbs;
  put_uint(signed_data, extensions.size(), 2);
  signed_data += extensions;

  const LogKey* log = root.find_ctlog(log_id);
  if (log == nullptr || !log->key) {
    return util::fail(fmt::format("no trusted CT log with id \"{}\"", hex_lower(log_id)));
  }
  // The key vouches for the SCT's time (milliseconds): its window must contain it, as every
  // key's must contain the time it vouches for (bundle_verifier.hpp). sigstore 4.5.1 only drops
  // a CT key whose window starts after now, and keeps expired ones.
  if (!log->valid_for.contains(static_cast<std::int64_t>(timestamp / 1000))) {
    return util::fail(fmt::format("the CT log's key (id \"{}\") was not valid at the SCT's time",
                                  hex_lower(log_id)));
  }
  if (!verify_signature(log->key.get(), signed_data, signature)) {
    return util::fail("SCT signature is invalid");
  }
  return {};
}

util::Expected<void> check_code_signing_profile(X509* leaf) {
  if ((X509_get_key_usage(leaf) & KU_DIGITAL_SIGNATURE) == 0) {
    return util::fail("Key usage is not of type `digital signature`");
  }
  if (!has_extended_usage(leaf, "1.3.6.1.5.5.7.3.3")) {
    return util::fail("Extended usage does not contain `code signing`");
  }
  return {};
}

bool valid_at(X509* certificate, std::int64_t time) {
  // Both ends inclusive, as sigstore judges them (X509_cmp_time treats equal as "before").
  const auto not_before = unix_time(X509_get0_notBefore(certificate));
  const auto not_after = unix_time(X509_get0_notAfter(certificate));
  return not_before && not_after && *not_before <= time && time <= *not_after;
}

std::optional<std::string> fulcio_extension(X509* certificate, std::string_view oid,
                                            ExtensionEncoding encoding) {
  std::unique_ptr<ASN1_OBJECT, decltype(&ASN1_OBJECT_free)> object(
      OBJ_txt2obj(std::string(oid).c_str(), 1), &ASN1_OBJECT_free);
  if (!object) {
    return std::nullopt;
  }
  const int at = X509_get_ext_by_OBJ(certificate, object.get(), -1);
  if (at < 0) {
    return std::nullopt;
  }
  const std::string value = extension_bytes(X509_get_ext(certificate, at));
  if (encoding == ExtensionEncoding::raw) {
    return value;
  }
  const auto* cursor = reinterpret_cast<const unsigned char*>(value.data());
  ASN1_UTF8STRING* text = d2i_ASN1_UTF8STRING(nullptr, &cursor, static_cast<long>(value.size()));
  if (text == nullptr) {
    ERR_clear_error();
    return std::nullopt;
  }
  const bool whole = cursor == reinterpret_cast<const unsigned char*>(value.data()) + value.size();
  std::string out(reinterpret_cast<const char*>(ASN1_STRING_get0_data(text)),
                  static_cast<std::size_t>(ASN1_STRING_length(text)));
  ASN1_UTF8STRING_free(text);
  if (!whole) {
    return std::nullopt;
  }
  return out;
}

}  // namespace kernelhub::verify
