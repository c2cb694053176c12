// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

#include <kernelhub/util/expected.hpp>
#include <kernelhub/verify/bundle.hpp>
#include <kernelhub/verify/trusted_root.hpp>

// The Rekor transparency-log entry's checks (signatures.md §3.6-3.8, §3.11): the entry is in
// the log (an RFC 6962 inclusion proof up to a root hash the log signed in a checkpoint), the
// log promised to include it at its integrated time (the signed entry timestamp), and it logs
// this very signature, key and artifact.
namespace kernelhub::verify {

// The RFC 9162 §2.1.3.2 audit path from SHA-256(0x00 || body) to the proof's root hash.
util::Expected<void> verify_inclusion_proof(const TransparencyLogEntry& entry);

// The checkpoint (a C2SP signed note) must be signed by `log` and name the proof's root hash
// and tree size. Signature lines of other keys (witnesses) are ignored.
util::Expected<void> verify_checkpoint(const TransparencyLogEntry& entry, const LogKey& log);

// The signed entry timestamp over the canonical JSON of body, integrated time, log id and
// global log index.
util::Expected<void> verify_signed_entry_timestamp(const TransparencyLogEntry& entry,
                                                   const LogKey& log);

// The entry's canonicalized body must describe `signature` by `leaf` over an artifact whose
// SHA-256 is `artifact_digest` (hashedrekord 0.0.1 or 0.0.2).
util::Expected<void> check_hashedrekord_body(const TransparencyLogEntry& entry,
                                             std::string_view artifact_digest,
                                             std::string_view signature, X509* leaf);

}  // namespace kernelhub::verify
