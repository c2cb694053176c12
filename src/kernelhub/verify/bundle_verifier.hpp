// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <span>
#include <string_view>

#include <kernelhub/util/expected.hpp>
#include <kernelhub/verify/bundle.hpp>
#include <kernelhub/verify/identity_policy.hpp>
#include <kernelhub/verify/trusted_root.hpp>

// sigstore's `Verifier.verify_artifact` (signatures.md §3), offline against a trusted root:
// is `bundle` a valid signature over exactly `artifact`, made by an identity `policies` accept?
namespace kernelhub::verify {

// Steps in sigstore 4.5.1's order: verified times, the chain at each, the SCT, key usages, the
// identity policy, the log entry (inclusion proof, checkpoint, SET), the leaf's validity at each
// time, the digest hint, the signature, and the log body's consistency. The error is the reason
// for SignatureVerificationFailure. A bundle both refuse usually fails at the same step, but not
// always with the same reason, because one rule is deliberately stricter than 4.5.1's:
//
// Every trusted-root key must be valid at the time it vouches for: a Fulcio CA at each verified
// time, a CT log's key at its SCT's time, a Rekor key at the integrated time its signed entry
// timestamp promises or, for a Rekor v2 entry (no SET), at each time the TSAs vouch for, and a
// TSA at its genTime (as 4.5.1 judges TSAs). For the others 4.5.1 drops only a key or CA whose
// window starts after now and keeps expired ones, so it accepts a Fulcio CA, a CT log key or a
// Rekor v1 key whose window does not cover the time it vouches for, if that window has begun;
// those bundles we refuse on purpose (tests/unit/verify/test_bundle_verifier.cpp). A key whose
// window starts after now both refuse.
//
// Verified times come from RFC 3161 timestamps a trusted authority signed over the signature
// (one that fails is skipped, as in sigstore) and from the log's integrated time backed by its
// signed entry timestamp; at least one is needed.
util::Expected<void> verify_artifact(std::string_view artifact, const Bundle& bundle,
                                     std::span<const GitHubWorkflowPolicy> policies,
                                     const TrustedRoot& root);

// The same steps with any identity rule at the policy step.
util::Expected<void> verify_artifact(std::string_view artifact, const Bundle& bundle,
                                     const IdentityCheck& identity, const TrustedRoot& root);

}  // namespace kernelhub::verify
