// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <span>
#include <string>
#include <string_view>

#include <kernelhub/util/expected.hpp>
#include <kernelhub/verify/bundle.hpp>
#include <kernelhub/verify/signing_key.hpp>
#include <kernelhub/verify/trusted_key.hpp>

// Keyed Sigstore bundles (signatures.md §4) for private hubs: signed with a team's key, checked
// against the keys the deployment trusts, offline and without Fulcio, Rekor or a trusted root.
namespace kernelhub::verify {

// The bundle `kernel-builder sign` writes as metadata.json.sigstore: media type v0.3,
// verificationMaterial {publicKey: {hint}, tlogEntries: []}, and a messageSignature with the
// artifact's SHA2_256 digest and the signature, as cosign's keyed mode writes it without a log.
// JSON with two-space indentation and a trailing newline.
util::Expected<std::string> write_keyed_bundle(std::string_view artifact, const SigningKey& key);

// Is `bundle` a signature over exactly `artifact` by one of `keys`? The hint only narrows the
// keys tried (a hint that names no trusted key fails with the hint quoted, so "signed by another
// key" reads as such); the digest, when present, must be SHA-256 of the artifact; the signature
// is checked with the algorithm of the trusted key's own type. The error is the reason for
// SignatureVerificationFailure; the value, the key that verified.
util::Expected<const TrustedKey*> verify_keyed_artifact(std::string_view artifact, const KeyedBundle& bundle,
                                           std::span<const TrustedKey> keys);

}  // namespace kernelhub::verify
