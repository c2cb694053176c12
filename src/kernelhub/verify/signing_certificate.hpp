// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/util/expected.hpp>
#include <kernelhub/verify/crypto.hpp>
#include <kernelhub/verify/trusted_root.hpp>

// The Fulcio signing certificate's checks (signatures.md §3.3-3.5, §3.9): its chain to a trusted
// CA at a verified time, its embedded SCT, its key usages and validity window, and the Fulcio
// extensions the identity policy reads.
namespace kernelhub::verify {

// Builds the chain from `leaf` to the root of a trusted Fulcio CA whose validFor contains
// `time`, judged at `time` (never at "now": Fulcio leaves live ten minutes). Returns the chain,
// leaf first. Certificates the bundle carries besides the leaf are not used.
util::Expected<std::vector<Certificate>> verify_chain_at(const Certificate& leaf,
                                                         const TrustedRoot& root,
                                                         std::int64_t time);

// The one embedded precertificate SCT (RFC 6962 §3.2) must be signed by a trusted CT log, whose
// key's validFor contains the SCT's timestamp, over the leaf's TBSCertificate without the SCT
// extension and its issuer's key hash.
util::Expected<void> verify_embedded_sct(const std::vector<Certificate>& chain,
                                         const TrustedRoot& root);

// keyUsage digitalSignature and extendedKeyUsage codeSigning, as sigstore's profile demands.
util::Expected<void> check_code_signing_profile(X509* leaf);

// notBefore <= time <= notAfter.
bool valid_at(X509* certificate, std::int64_t time);

// A Fulcio extension's value by OID (arc 1.3.6.1.4.1.57264.1): the deprecated .1-.6 carry the
// UTF-8 bytes raw, .8 and later a DER UTF8String. Absent (or not decodable) gives nullopt.
enum class ExtensionEncoding { raw, der_utf8_string };
std::optional<std::string> fulcio_extension(X509* certificate, std::string_view oid,
                                            ExtensionEncoding encoding);

}  // namespace kernelhub::verify
