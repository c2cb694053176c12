// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/verify/signed_variant.hpp>

#include <system_error>

#include <kernelhub/metadata/metadata_reader.hpp>
#include <kernelhub/util/file_io.hpp>
#include <kernelhub/verify/bundle.hpp>
#include <kernelhub/verify/bundle_verifier.hpp>
#include <kernelhub/verify/keyed_bundle.hpp>

namespace kernelhub::verify {

namespace fs = std::filesystem;

namespace {

bool is_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

SignatureCheck result(SignatureStatus status, std::string reason = {}) {
  SignatureCheck check;
  check.status = status;
  check.reason = std::move(reason);
  return check;
}

// The steps after the signature: the authenticated bytes parsed, then the variant rehashed.
SignatureCheck check_signed_metadata(const fs::path& variant_dir,
                                     const std::string& metadata_bytes) {
  auto metadata = metadata::parse_metadata(metadata_bytes);
  if (!metadata) {
    return result(SignatureStatus::metadata_invalid,
                  "Cannot parse metadata: " + metadata.error().message);
  }
  if (!metadata->digest) {
    return result(SignatureStatus::digest_missing);
  }
  const metadata::Digest& expected = *metadata->digest;
  auto actual = metadata::hash_variant_files(expected.algorithm, variant_dir);
  if (!actual) {
    return result(SignatureStatus::digest_mismatch, actual.error().message);
  }
  SignatureCheck check;
  check.violations = metadata::validate(expected, actual->digest);
  check.uncovered = std::move(actual->uncovered);
  check.status = check.violations.empty() ? SignatureStatus::success
                                          : SignatureStatus::digest_mismatch;
  return check;
}

}  // namespace

std::string_view kind_name(SignatureStatus status) {
  switch (status) {
    case SignatureStatus::success:
      return "Success";
    case SignatureStatus::bundle_missing:
      return "SignatureBundleMissing";
    case SignatureStatus::bundle_invalid:
      return "SignatureBundleInvalid";
    case SignatureStatus::metadata_missing:
      return "MetadataMissing";
    case SignatureStatus::signature_failure:
      return "SignatureVerificationFailure";
    case SignatureStatus::metadata_invalid:
      return "MetadataInvalid";
    case SignatureStatus::digest_missing:
      return "DigestMissing";
    case SignatureStatus::digest_mismatch:
      return "DigestVerificationFailure";
  }
  return "Unknown";
}

SignatureCheck verify_signed_variant(const fs::path& variant_dir,
                                     std::span<const GitHubWorkflowPolicy> policies,
                                     const TrustedRoot& root) {
  return verify_signed_variant(variant_dir, [&](std::string_view artifact, const Bundle& bundle) {
    return verify_artifact(artifact, bundle, policies, root);
  });
}

SignatureCheck verify_signed_variant(const fs::path& variant_dir, const IdentityCheck& identity,
                                     const TrustedRoot& root) {
  return verify_signed_variant(variant_dir, [&](std::string_view artifact, const Bundle& bundle) {
    return verify_artifact(artifact, bundle, identity, root);
  });
}

SignatureCheck verify_signed_variant(const fs::path& variant_dir,
                                     const ArtifactVerifier& verify_signature) {
  const fs::path bundle_path = variant_dir / "metadata.json.sigstore";
  if (!is_file(bundle_path)) {
    return result(SignatureStatus::bundle_missing);
  }
  auto bundle_text = util::read_file(bundle_path);
  if (!bundle_text) {
    return result(SignatureStatus::bundle_invalid, bundle_text.error().message);
  }
  auto bundle = parse_bundle(*bundle_text);
  if (!bundle) {
    return result(SignatureStatus::bundle_invalid, bundle.error().message);
  }
  const fs::path metadata_path = variant_dir / "metadata.json";
  if (!is_file(metadata_path)) {
    return result(SignatureStatus::metadata_missing);
  }
  auto metadata_bytes = util::read_file(metadata_path);
  if (!metadata_bytes) {
    return result(SignatureStatus::metadata_missing);
  }
  // Authenticate the bytes before the JSON parser sees them.
  if (auto verified = verify_signature(*metadata_bytes, *bundle); !verified) {
    return result(SignatureStatus::signature_failure, verified.error().message);
  }
  return check_signed_metadata(variant_dir, *metadata_bytes);
}

SignatureCheck verify_signed_variant(const fs::path& variant_dir,
                                     std::span<const GitHubWorkflowPolicy> policies,
                                     const TrustedRoot& root, std::span<const TrustedKey> keys) {
  const fs::path bundle_path = variant_dir / "metadata.json.sigstore";
  if (keys.empty() || !is_file(bundle_path)) {
    return verify_signed_variant(variant_dir, policies, root);
  }
  auto bundle_text = util::read_file(bundle_path);
  if (!bundle_text) {
    return result(SignatureStatus::bundle_invalid, bundle_text.error().message);
  }
  if (!names_public_key(*bundle_text)) {
    return verify_signed_variant(variant_dir, policies, root);
  }
  if (auto bundle = parse_keyed_bundle(*bundle_text); !bundle) {
    return result(SignatureStatus::bundle_invalid, bundle.error().message);
  }
  const fs::path metadata_path = variant_dir / "metadata.json";
  auto metadata_bytes = is_file(metadata_path) ? util::read_file(metadata_path)
                                               : util::fail("metadata.json not found");
  if (!metadata_bytes) {
    return result(SignatureStatus::metadata_missing);
  }
  SignatureCheck signature =
      verify_metadata_signature(*bundle_text, *metadata_bytes, policies, root, keys);
  if (!signature.passed()) {
    return signature;
  }
  SignatureCheck check = check_signed_metadata(variant_dir, *metadata_bytes);
  check.key_hint = std::move(signature.key_hint);
  check.key_source = std::move(signature.key_source);
  return check;
}

SignatureCheck verify_metadata_signature(std::string_view bundle_text,
                                         std::string_view metadata_bytes,
                                         std::span<const GitHubWorkflowPolicy> policies,
                                         const TrustedRoot& root,
                                         std::span<const TrustedKey> keys) {
  if (!keys.empty() && names_public_key(bundle_text)) {
    auto bundle = parse_keyed_bundle(bundle_text);
    if (!bundle) {
      return result(SignatureStatus::bundle_invalid, bundle.error().message);
    }
    auto signer = verify_keyed_artifact(metadata_bytes, *bundle, keys);
    if (!signer) {
      return result(SignatureStatus::signature_failure, signer.error().message);
    }
    SignatureCheck check;
    check.key_hint = (*signer)->hint;
    check.key_source = (*signer)->source;
    return check;
  }
  auto bundle = parse_bundle(bundle_text);
  if (!bundle) {
    return result(SignatureStatus::bundle_invalid, bundle.error().message);
  }
  if (auto verified = verify_artifact(metadata_bytes, *bundle, policies, root); !verified) {
    return result(SignatureStatus::signature_failure, verified.error().message);
  }
  return SignatureCheck{};
}

}  // namespace kernelhub::verify
