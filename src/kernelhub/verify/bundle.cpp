// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/verify/bundle.hpp>

#include <algorithm>

#include <fmt/format.h>

#include <kernelhub/verify/check.hpp>
#include <kernelhub/verify/proto_json_message.hpp>
#include <kernelhub/verify/timestamp_response.hpp>
#include <nlohmann/json.hpp>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace kernelhub::verify {

namespace {

using nlohmann::json;

constexpr std::string_view k_code_signing_oid = "1.3.6.1.5.5.7.3.3";

using Message = ProtoJsonMessage;

util::Expected<Certificate> certificate_field(const Message& owner, const json& value,
                                              std::string_view field) {
  const Message certificate = owner.child(value, field);
  KH_CHECK(certificate.only({"rawBytes"}));
  const std::string der = KH_TRY(certificate.bytes("rawBytes"));
  return parse_certificate_der(der);
}

bool has_code_signing(X509* certificate) {
  auto* usages = static_cast<EXTENDED_KEY_USAGE*>(
      X509_get_ext_d2i(certificate, NID_ext_key_usage, nullptr, nullptr));
  if (usages == nullptr) {
    return false;
  }
  bool found = false;
  for (int i = 0; i < sk_ASN1_OBJECT_num(usages); ++i) {
    char text[64] = {};
    OBJ_obj2txt(text, sizeof(text), sk_ASN1_OBJECT_value(usages, i), 1);
    found = found || text == k_code_signing_oid;
  }
  EXTENDED_KEY_USAGE_free(usages);
  return found;
}

// sigstore's cert_is_leaf: an X.509 v3 certificate that is no CA, has digitalSignature and the
// code-signing extended usage.
util::Expected<void> check_leaf(X509* certificate) {
  if (X509_get_version(certificate) != X509_VERSION_3) {
    return util::fail("invalid X.509 version");
  }
  if (X509_check_ca(certificate) != 0) {
    return util::fail(
        "bundle contains an invalid leaf or non-leaf certificate in the leaf position");
  }
  if ((X509_get_key_usage(certificate) & KU_DIGITAL_SIGNATURE) == 0) {
    return util::fail("invalid certificate for Sigstore purposes: missing digital signature usage");
  }
  if (!has_code_signing(certificate)) {
    return util::fail(
        "bundle contains an invalid leaf or non-leaf certificate in the leaf position");
  }
  return {};
}

util::Expected<TransparencyLogEntry> parse_entry(const Message& entry) {
  KH_CHECK(entry.only({"logIndex", "logId", "kindVersion", "integratedTime", "inclusionPromise",
                     "inclusionProof", "canonicalizedBody"}));
  TransparencyLogEntry parsed;
  parsed.log_index = KH_TRY(entry.uint64("logIndex"));
  const Message log_id = entry.child(*KH_TRY(entry.required("logId")), "logId");
  KH_CHECK(log_id.only({"keyId"}));
  parsed.log_id = KH_TRY(log_id.bytes("keyId"));
  const Message kind = entry.child(*KH_TRY(entry.required("kindVersion")), "kindVersion");
  KH_CHECK(kind.only({"kind", "version"}));
  parsed.kind = KH_TRY(kind.string("kind"));
  parsed.version = KH_TRY(kind.string("version"));
  if (entry.get("integratedTime") != nullptr) {
    parsed.integrated_time = static_cast<std::int64_t>(KH_TRY(entry.uint64("integratedTime")));
  }
  if (const json* promise = entry.get("inclusionPromise")) {
    const Message set = entry.child(*promise, "inclusionPromise");
    KH_CHECK(set.only({"signedEntryTimestamp"}));
    parsed.signed_entry_timestamp = KH_TRY(set.bytes("signedEntryTimestamp"));
  }
  parsed.canonicalized_body = KH_TRY(entry.bytes("canonicalizedBody"));
  // The schema requires the proof; the checkpoint only sigstore's client rules (checked later,
  // after the certificate, as Bundle._verify orders them).
  const Message proof = entry.child(*KH_TRY(entry.required("inclusionProof")), "inclusionProof");
  KH_CHECK(proof.only({"logIndex", "rootHash", "treeSize", "hashes", "checkpoint"}));
  parsed.proof.log_index = KH_TRY(proof.uint64("logIndex"));
  parsed.proof.root_hash = KH_TRY(proof.bytes("rootHash"));
  parsed.proof.tree_size = KH_TRY(proof.uint64("treeSize"));
  for (const json* hash : KH_TRY(proof.array("hashes", true))) {
    if (!hash->is_string()) {
      return util::fail(fmt::format("\"{}\": input should be a valid string", proof.path("hashes")));
    }
    auto decoded = base64_decode(hash->get<std::string>());
    if (!decoded) {
      return util::fail(fmt::format("\"{}\": {}", proof.path("hashes"), decoded.error().message));
    }
    parsed.proof.hashes.push_back(std::move(*decoded));
  }
  if (const json* checkpoint = proof.get("checkpoint")) {
    const Message note = proof.child(*checkpoint, "checkpoint");
    KH_CHECK(note.only({"envelope"}));
    parsed.proof.checkpoint = KH_TRY(note.string("envelope"));
  }
  return parsed;
}

util::Expected<void> parse_signature(const Message& root, const json& value, Bundle& bundle) {
  const Message signature = root.child(value, "messageSignature");
  KH_CHECK(signature.only({"messageDigest", "signature"}));
  if (const json* digest_value = signature.get("messageDigest")) {
    const Message digest = signature.child(*digest_value, "messageDigest");
    KH_CHECK(digest.only({"algorithm", "digest"}));
    const std::string algorithm = KH_TRY(digest.string("algorithm"));
    static constexpr std::string_view k_algorithms[] = {"SHA2_256", "SHA2_384", "SHA2_512",
                                                        "SHA3_256", "SHA3_384"};
    if (std::find(std::begin(k_algorithms), std::end(k_algorithms), algorithm) ==
        std::end(k_algorithms)) {
      return util::fail(fmt::format("\"{}\": unknown hash algorithm \"{}\"",
                                    digest.path("algorithm"), algorithm));
    }
    bundle.message_digest = KH_TRY(digest.bytes("digest"));
  }
  bundle.signature = KH_TRY(signature.bytes("signature"));
  return {};
}

util::Expected<void> parse_envelope(const Message& root, const json& value, Bundle& bundle) {
  const Message envelope = root.child(value, "dsseEnvelope");
  KH_CHECK(envelope.only({"payload", "payloadType", "signatures"}));
  DsseEnvelope parsed;
  parsed.payload = KH_TRY(envelope.bytes("payload"));
  parsed.payload_type = KH_TRY(envelope.string("payloadType"));
  for (const json* item : KH_TRY(envelope.array("signatures", true))) {
    const Message signature = envelope.child(*item, "signatures");
    KH_CHECK(signature.only({"sig", "keyid"}));
    parsed.signatures.push_back(KH_TRY(signature.bytes("sig")));
  }
  bundle.dsse = std::move(parsed);
  return {};
}

util::Expected<BundleVersion> media_type_version(const Message& root) {
  const std::string media_type = KH_TRY(root.string("mediaType"));
  if (media_type == "application/vnd.dev.sigstore.bundle+json;version=0.1") {
    return BundleVersion::v0_1;
  }
  if (media_type == "application/vnd.dev.sigstore.bundle+json;version=0.2") {
    return BundleVersion::v0_2;
  }
  if (media_type == "application/vnd.dev.sigstore.bundle+json;version=0.3" ||
      media_type == "application/vnd.dev.sigstore.bundle.v0.3+json") {
    return BundleVersion::v0_3;
  }
  return util::fail(fmt::format("unsupported bundle format: \"{}\"", media_type));
}

util::Expected<Bundle> parse_structure(const json& document) {
  const Message root(document, "$");
  KH_CHECK(root.only({"mediaType", "verificationMaterial", "messageSignature", "dsseEnvelope"}));
  Bundle bundle;
  bundle.version = KH_TRY(media_type_version(root));

  const Message material =
      root.child(*KH_TRY(root.required("verificationMaterial")), "verificationMaterial");
  KH_CHECK(material.only({"publicKey", "x509CertificateChain", "certificate", "tlogEntries",
                        "timestampVerificationData"}));
  const json* public_key = material.get("publicKey");
  const json* chain = material.get("x509CertificateChain");
  const json* certificate = material.get("certificate");
  if ((public_key != nullptr) + (chain != nullptr) + (certificate != nullptr) != 1) {
    return util::fail(
        "exactly one of publicKey, x509CertificateChain, or certificate must be set");
  }
  if (public_key != nullptr) {
    const Message key = material.child(*public_key, "publicKey");
    KH_CHECK(key.only({"hint"}));
  }
  std::vector<Certificate> chain_certificates;
  if (chain != nullptr) {
    const Message pool = material.child(*chain, "x509CertificateChain");
    KH_CHECK(pool.only({"certificates"}));
    for (const json* item : KH_TRY(pool.array("certificates", true))) {
      chain_certificates.push_back(KH_TRY(certificate_field(pool, *item, "certificates")));
    }
  }
  std::optional<Certificate> single;
  if (certificate != nullptr) {
    single = KH_TRY(certificate_field(material, *certificate, "certificate"));
  }
  const auto entries = KH_TRY(material.array("tlogEntries", true));
  std::vector<TransparencyLogEntry> parsed_entries;
  for (const json* entry : entries) {
    parsed_entries.push_back(KH_TRY(parse_entry(material.child(*entry, "tlogEntries"))));
  }
  if (const json* timestamps = material.get("timestampVerificationData")) {
    const Message data = material.child(*timestamps, "timestampVerificationData");
    KH_CHECK(data.only({"rfc3161Timestamps"}));
    for (const json* item : KH_TRY(data.array("rfc3161Timestamps", false))) {
      const Message stamp = data.child(*item, "rfc3161Timestamps");
      KH_CHECK(stamp.only({"signedTimestamp"}));
      bundle.rfc3161_timestamps.push_back(KH_TRY(stamp.bytes("signedTimestamp")));
    }
  }

  const json* message_signature = root.get("messageSignature");
  const json* envelope = root.get("dsseEnvelope");
  if ((message_signature != nullptr) + (envelope != nullptr) != 1) {
    return util::fail("exactly one of messageSignature or dsseEnvelope must be set");
  }
  if (message_signature != nullptr) {
    KH_CHECK(parse_signature(root, *message_signature, bundle));
  } else {
    KH_CHECK(parse_envelope(root, *envelope, bundle));
  }

  // The rules the bundle's version adds on top of the schema (sigstore's Bundle._verify).
  if (bundle.version == BundleVersion::v0_3) {
    if (!single) {
      return util::fail("expected certificate in bundle");
    }
    bundle.leaf = *single;
  } else {
    if (chain == nullptr) {
      return util::fail("expected certificate chain in bundle");
    }
    if (chain_certificates.empty()) {
      return util::fail("expected non-empty certificate chain in bundle");
    }
    // Later certificates of the pool are ignored: intermediates come from the trusted root.
    KH_CHECK(check_leaf(chain_certificates.front().get()));
    bundle.leaf = chain_certificates.front();
  }
  if (parsed_entries.size() != 1) {
    return util::fail("expected exactly one log entry in bundle");
  }
  bundle.entry = std::move(parsed_entries.front());
  if (bundle.entry.version != "0.0.1" && bundle.entry.version != "0.0.2") {
    return util::fail(fmt::format("expected log entry version 0.0.1 - 0.0.2, got \"{}\"",
                                  bundle.entry.version));
  }
  if (bundle.entry.proof.checkpoint.empty()) {
    return util::fail("entry must contain inclusion proof, with checkpoint");
  }
  if (bundle.version == BundleVersion::v0_1) {
    if (!bundle.entry.signed_entry_timestamp) {
      return util::fail("bundle must contain an inclusion promise");
    }
  } else if (!bundle.entry.signed_entry_timestamp && bundle.rfc3161_timestamps.empty()) {
    return util::fail("bundle must contain an inclusion promise or signed timestamp(s)");
  }
  for (const std::string& response : bundle.rfc3161_timestamps) {
    if (!is_timestamp_response(response)) {
      return util::fail("Invalid Timestamp Response");
    }
  }
  return bundle;
}

util::Expected<KeyedBundle> parse_keyed_structure(const json& document) {
  const Message root(document, "$");
  KH_CHECK(root.only({"mediaType", "verificationMaterial", "messageSignature", "dsseEnvelope"}));
  KeyedBundle keyed;
  keyed.version = KH_TRY(media_type_version(root));
  const Message material =
      root.child(*KH_TRY(root.required("verificationMaterial")), "verificationMaterial");
  KH_CHECK(material.only({"publicKey", "x509CertificateChain", "certificate", "tlogEntries",
                          "timestampVerificationData"}));
  if (material.get("x509CertificateChain") != nullptr || material.get("certificate") != nullptr) {
    return util::fail(
        "exactly one of publicKey, x509CertificateChain, or certificate must be set");
  }
  const Message key = material.child(*KH_TRY(material.required("publicKey")), "publicKey");
  KH_CHECK(key.only({"hint"}));
  if (key.get("hint") != nullptr) {
    keyed.hint = KH_TRY(key.string("hint"));
  }
  // protobuf JSON leaves an empty repeated field out; sigstore-models wants it present. Both
  // are read here, and anything in it is refused (see the header).
  if (!KH_TRY(material.array("tlogEntries", false)).empty()) {
    return util::fail(
        "keyed bundles with transparency-log entries are not supported (sign with "
        "`kernel-builder sign`, or cosign without a transparency log)");
  }
  if (const json* timestamps = material.get("timestampVerificationData")) {
    const Message data = material.child(*timestamps, "timestampVerificationData");
    KH_CHECK(data.only({"rfc3161Timestamps"}));
    if (!KH_TRY(data.array("rfc3161Timestamps", false)).empty()) {
      return util::fail("keyed bundles with RFC 3161 timestamps are not supported");
    }
  }
  if (root.get("dsseEnvelope") != nullptr) {
    return util::fail("keyed DSSE bundles are not supported: sign metadata.json itself");
  }
  const json* message_signature = root.get("messageSignature");
  if (message_signature == nullptr) {
    return util::fail("exactly one of messageSignature or dsseEnvelope must be set");
  }
  Bundle parsed;
  KH_CHECK(parse_signature(root, *message_signature, parsed));
  if (parsed.message_digest) {
    const Message signature = root.child(*message_signature, "messageSignature");
    const Message digest = signature.child(*signature.get("messageDigest"), "messageDigest");
    if (const std::string algorithm = KH_TRY(digest.string("algorithm")); algorithm != "SHA2_256") {
      return util::fail(fmt::format("\"{}\": keyed bundles are checked with SHA2_256, not \"{}\"",
                                    digest.path("algorithm"), algorithm));
    }
  }
  keyed.signature = std::move(*parsed.signature);
  keyed.message_digest = std::move(parsed.message_digest);
  return keyed;
}

}  // namespace

bool names_public_key(std::string_view text) {
  const json document = json::parse(text, nullptr, false);
  if (!document.is_object()) {
    return false;
  }
  const auto material = document.find("verificationMaterial");
  if (material == document.end() || !material->is_object()) {
    return false;
  }
  for (const char* name : {"publicKey", "public_key"}) {
    const auto key = material->find(name);
    if (key != material->end() && !key->is_null()) {
      return true;
    }
  }
  return false;
}

util::Expected<KeyedBundle> parse_keyed_bundle(std::string_view text) {
  const json document = json::parse(text, nullptr, false);
  if (document.is_discarded()) {
    return util::fail("failed to load bundle: invalid JSON");
  }
  return parse_keyed_structure(document);
}

util::Expected<Bundle> parse_bundle(std::string_view text) {
  const json document = json::parse(text, nullptr, false);
  if (document.is_discarded()) {
    return util::fail("failed to load bundle: invalid JSON");
  }
  return parse_structure(document);
}

}  // namespace kernelhub::verify
