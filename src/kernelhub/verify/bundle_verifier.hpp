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

// Steps in sigstore 4.5.1's order, so the first failure reported is the same one: verified
// times, the chain at each, the SCT, key usages, the identity policy, the log entry (inclusion
// proof, checkpoint, SET), the leaf's validity at each time, the digest hint, the signature, and
// the log body's consistency. The error is the reason for SignatureVerificationFailure.
//
// Verified times come from RFC 3161 timestamps a trusted authority signed over the signature
// (one that fails is skipped, as in sigstore) and from the log's integrated time backed by its
// signed entry timestamp; at least one is needed.
util::Expected<void> verify_artifact(std::string_view artifact, const Bundle& bundle,
                                     std::span<const GitHubWorkflowPolicy> policies,
                                     const TrustedRoot& root);

}  // namespace kernelhub::verify
