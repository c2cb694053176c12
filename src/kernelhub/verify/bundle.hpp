// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/util/expected.hpp>
#include <kernelhub/verify/crypto.hpp>

// A Sigstore bundle (signatures.md §2): what `cosign sign-blob --bundle` writes next to a
// variant's metadata.json as metadata.json.sigstore. Parsing applies the same rules as the
// reference's `Bundle.from_json` (sigstore 4.5.1), so a bundle it calls invalid is invalid here:
// strict protobuf-JSON typing (unknown fields, 64-bit integers as JSON numbers, bad base64),
// the media type, the one-of groups and the structural rules of §3.1.
namespace kernelhub::verify {

enum class BundleVersion { v0_1, v0_2, v0_3 };

struct InclusionProof {
  std::uint64_t log_index = 0;  // in this log shard's tree, not the entry's global index
  std::uint64_t tree_size = 0;
  std::string root_hash;
  std::vector<std::string> hashes;  // leaf to root
  std::string checkpoint;           // the signed note's text
};

struct TransparencyLogEntry {
  std::uint64_t log_index = 0;  // global; what the signed entry timestamp covers
  std::string log_id;           // raw bytes
  std::string kind;             // "hashedrekord", "dsse", ...
  std::string version;          // "0.0.1", "0.0.2"
  std::optional<std::int64_t> integrated_time;
  std::optional<std::string> signed_entry_timestamp;
  InclusionProof proof;
  std::string canonicalized_body;  // the exact bytes the log hashed
};

struct DsseEnvelope {
  std::string payload;
  std::string payload_type;
  std::vector<std::string> signatures;
};

struct Bundle {
  BundleVersion version = BundleVersion::v0_3;
  Certificate leaf;  // the signing certificate (the first of a v0.1/v0.2 chain)
  // messageSignature: the signature over the artifact and the optional, unauthenticated digest
  // hint; absent for DSSE bundles.
  std::optional<std::string> signature;
  std::optional<std::string> message_digest;
  std::optional<DsseEnvelope> dsse;
  TransparencyLogEntry entry;
  std::vector<std::string> rfc3161_timestamps;  // DER TimeStampResp each
};

// Parses a bundle; the error is the reason the reference reports as SignatureBundleInvalid.
util::Expected<Bundle> parse_bundle(std::string_view json);

// A keyed bundle (signatures.md §4): `verificationMaterial.publicKey` names a key delivered out
// of band instead of carrying a certificate, as `cosign sign-blob --key` and `kernel-builder
// sign` write. sigstore 4.5.1 (so kernels) refuses these ("expected certificate in bundle"); we
// verify them against configured keys (keyed_bundle.hpp).
struct KeyedBundle {
  BundleVersion version = BundleVersion::v0_3;
  std::optional<std::string> hint;  // unauthenticated: it may only pick among trusted keys
  std::string signature;
  std::optional<std::string> message_digest;  // SHA2_256 of the artifact, when given
};

// True when `json` is a bundle object whose verificationMaterial has a publicKey; says nothing
// about the rest of its validity.
bool names_public_key(std::string_view json);

// The same strict reading as parse_bundle for the fields a keyed bundle has. A keyed bundle with
// transparency-log entries or timestamps is refused: nothing here would verify them, and
// accepting a bundle with unchecked parts would misstate what was checked.
util::Expected<KeyedBundle> parse_keyed_bundle(std::string_view json);

}  // namespace kernelhub::verify
