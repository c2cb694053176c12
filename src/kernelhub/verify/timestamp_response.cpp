// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/verify/timestamp_response.hpp>

#include <algorithm>
#include <ctime>
#include <string>
#include <memory>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pkcs7.h>
#include <openssl/ts.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <kernelhub/verify/crypto.hpp>

namespace kernelhub::verify {

namespace {

struct ResponseFree {
  void operator()(TS_RESP* response) const { TS_RESP_free(response); }
};
using Response = std::unique_ptr<TS_RESP, ResponseFree>;

Response parse(std::string_view der) {
  const auto* cursor = reinterpret_cast<const unsigned char*>(der.data());
  Response response(d2i_TS_RESP(nullptr, &cursor, static_cast<long>(der.size())));
  if (response &&
      cursor != reinterpret_cast<const unsigned char*>(der.data()) + der.size()) {
    response.reset();  // trailing bytes: not one response
  }
  ERR_clear_error();
  return response;
}

std::optional<std::int64_t> generalized_time(const ASN1_GENERALIZEDTIME* time) {
  std::tm parts{};
  if (time == nullptr || ASN1_TIME_to_tm(time, &parts) != 1) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(timegm(&parts));
}

// One authority's verdict on the response, through OpenSSL's TS verifier (which checks the
// version, the CMS signature and its ESS signing-certificate binding, the chain with the
// timestamping purpose and a critical timeStamping-only EKU, and the imprint over `signature`).
bool accepted_by(TS_RESP* response, std::string_view signature,
                 const CertificateAuthority& authority, std::int64_t gen_time) {
  TS_VERIFY_CTX* context = TS_VERIFY_CTX_new();
  if (context == nullptr) {
    return false;
  }
  // The context owns the store, the certificate stack and the data BIO from here on.
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, authority.chain.back().get());
  X509_VERIFY_PARAM_set_time(X509_STORE_get0_param(store), static_cast<time_t>(gen_time));
  TS_VERIFY_CTX_set_store(context, store);
  STACK_OF(X509)* certificates = sk_X509_new_null();
  for (std::size_t i = 0; i + 1 < authority.chain.size(); ++i) {
    X509_up_ref(authority.chain[i].get());
    sk_X509_push(certificates, authority.chain[i].get());
  }
  TS_VERIFY_CTX_set_certs(context, certificates);
  TS_VERIFY_CTX_set_data(context, BIO_new_mem_buf(signature.data(),
                                                  static_cast<int>(signature.size())));
  TS_VERIFY_CTX_set_flags(context, TS_VFY_VERSION | TS_VFY_SIGNATURE | TS_VFY_DATA);
  bool ok = TS_RESP_verify_response(context, response) == 1;
  if (ok) {
    // The signer must be the authority's own leaf, also when the response embeds certificates.
    STACK_OF(X509)* signers = PKCS7_get0_signers(TS_RESP_get_token(response), certificates, 0);
    ok = signers != nullptr && sk_X509_num(signers) == 1 &&
         X509_cmp(sk_X509_value(signers, 0), authority.chain.front().get()) == 0;
    sk_X509_free(signers);
  }
  TS_VERIFY_CTX_free(context);
  ERR_clear_error();
  return ok;
}

// DER orders a SET OF by its members' encodings (X.690 §11.6); BER does not. The reference's
// parser (rfc3161-client, on rust-asn1) refuses a response whose embedded certificates are out
// of order, so this reader does too, to give such a bundle the same verdict.
bool certificates_in_der_order(TS_RESP* response) {
  PKCS7* token = TS_RESP_get_token(response);
  if (token == nullptr || !PKCS7_type_is_signed(token) || token->d.sign == nullptr) {
    return true;
  }
  const STACK_OF(X509)* certificates = token->d.sign->cert;
  std::string previous;
  for (int i = 0; i < sk_X509_num(certificates); ++i) {
    std::string current = certificate_der(sk_X509_value(certificates, i));
    // Compared as octet strings, the shorter one padded with zero bytes at its end.
    std::string left = previous;
    std::string right = current;
    const std::size_t size = std::max(left.size(), right.size());
    left.resize(size, '\0');
    right.resize(size, '\0');
    if (i > 0 && left > right) {
      return false;
    }
    previous = std::move(current);
  }
  return true;
}

}  // namespace

bool is_timestamp_response(std::string_view der) {
  const Response response = parse(der);
  return response != nullptr && certificates_in_der_order(response.get());
}

std::optional<std::int64_t> verify_timestamp(std::string_view der, std::string_view signature,
                                             const TrustedRoot& root) {
  const Response response = parse(der);
  if (!response) {
    return std::nullopt;
  }
  // Only "granted" (0): sigstore refuses grantedWithMods, which OpenSSL would accept.
  const ASN1_INTEGER* status = TS_STATUS_INFO_get0_status(TS_RESP_get_status_info(response.get()));
  TS_TST_INFO* info = TS_RESP_get_tst_info(response.get());
  if (status == nullptr || ASN1_INTEGER_get(status) != 0 || info == nullptr) {
    return std::nullopt;
  }
  const auto gen_time = generalized_time(TS_TST_INFO_get_time(info));
  if (!gen_time) {
    return std::nullopt;
  }
  for (const CertificateAuthority& authority : root.timestamp_authorities) {
    if (authority.chain.size() < 2) {
      continue;  // a leaf and a root at least
    }
    if (!accepted_by(response.get(), signature, authority, *gen_time)) {
      continue;
    }
    const ValidityPeriod& period = authority.valid_for;
    if (period.start <= *gen_time && (!period.end || *gen_time < *period.end)) {
      return gen_time;
    }
  }
  return std::nullopt;
}

}  // namespace kernelhub::verify
