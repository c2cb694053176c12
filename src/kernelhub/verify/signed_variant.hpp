// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/metadata/digest.hpp>
#include <kernelhub/util/expected.hpp>
#include <kernelhub/verify/bundle.hpp>
#include <kernelhub/verify/identity_policy.hpp>
#include <kernelhub/verify/trusted_key.hpp>
#include <kernelhub/verify/trusted_root.hpp>

// kernels' `verify_variant` (signatures.md §1.2): the variant's metadata.json is signed by a
// trusted workflow (metadata.json.sigstore), and every file of the variant is the one its digest
// names. Nothing here runs Python or touches the network.
namespace kernelhub::verify {

// The reference's VerificationResult kinds, in the order the steps can return them.
enum class SignatureStatus {
  success,
  bundle_missing,        // SignatureBundleMissing
  bundle_invalid,        // SignatureBundleInvalid(reason)
  metadata_missing,      // MetadataMissing
  signature_failure,     // SignatureVerificationFailure(reason)
  metadata_invalid,      // MetadataInvalid(reason)
  digest_missing,        // DigestMissing
  digest_mismatch,       // DigestVerificationFailure(violations)
};

// The reference's class names: "Success", "SignatureBundleMissing", ...
std::string_view kind_name(SignatureStatus status);

struct SignatureCheck {
  SignatureStatus status = SignatureStatus::success;
  std::string reason;  // bundle_invalid, signature_failure, metadata_invalid
  std::vector<metadata::DigestViolation> violations;
  // What the digest does not cover (metadata::VariantFiles::uncovered: bytecode, links to
  // folders), whatever the status: the reference says Success beside them, so callers decide
  // (require_signature refuses links to folders, verify-signature reports all of them).
  std::vector<std::string> uncovered;
  // A keyed bundle that verified: the trusted key's hint and where it came from; empty for a
  // certificate (workflow) signature.
  std::string key_hint;
  std::string key_source;

  bool passed() const { return status == SignatureStatus::success; }
};

// Checks one variant folder; every outcome is a status. The signature is checked over the
// exact bytes of metadata.json before they are parsed, and the same bytes are then parsed (a
// file swapped in between cannot slip through). A file that cannot be rehashed (a dangling
// link) is a digest mismatch naming it, since the digest cannot be confirmed.
SignatureCheck verify_signed_variant(const std::filesystem::path& variant_dir,
                                     std::span<const GitHubWorkflowPolicy> policies,
                                     const TrustedRoot& root);

// The same with any identity rule at the policy step (identity_policy.hpp): the caller's own
// sigstore policies, for kernelhub.verify.
SignatureCheck verify_signed_variant(const std::filesystem::path& variant_dir,
                                     const IdentityCheck& identity, const TrustedRoot& root);

// The same, also accepting a keyed bundle (verificationMaterial.publicKey) signed by one of
// `keys` (a private hub's keys, keyed_bundle.hpp). With no keys this is the overload above, so
// a keyed bundle gets the reference's verdict (SignatureBundleInvalid, "expected certificate in
// bundle").
SignatureCheck verify_signed_variant(const std::filesystem::path& variant_dir,
                                     std::span<const GitHubWorkflowPolicy> policies,
                                     const TrustedRoot& root, std::span<const TrustedKey> keys);

// The signature step alone, over bytes: `bundle_text` (metadata.json.sigstore) over
// `metadata_bytes`, for a hub that holds variants as git trees rather than folders. Gives
// success (with key_hint and key_source for a keyed bundle), bundle_invalid or
// signature_failure; a keyed bundle with no `keys` is bundle_invalid, as above.
SignatureCheck verify_metadata_signature(std::string_view bundle_text,
                                         std::string_view metadata_bytes,
                                         std::span<const GitHubWorkflowPolicy> policies,
                                         const TrustedRoot& root,
                                         std::span<const TrustedKey> keys);

// The same steps with the signature check behind a seam, so the steps after it (metadata,
// digest) can be tested without a signing infrastructure.
using ArtifactVerifier =
    std::function<util::Expected<void>(std::string_view artifact, const Bundle& bundle)>;
SignatureCheck verify_signed_variant(const std::filesystem::path& variant_dir,
                                     const ArtifactVerifier& verify_signature);

}  // namespace kernelhub::verify
