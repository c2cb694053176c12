// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <kernelhub/loader/trusted_keys.hpp>
#include <kernelhub/util/expected.hpp>
#include <kernelhub/verify/signed_variant.hpp>

// The loader's `require_signature` option (issue 14): refuse a variant whose metadata.json is
// not signed by a trusted build workflow, or whose files differ from its digest, before any of
// its code is imported or dlopen'ed. Off by default, as the reference never verifies on load;
// on per call (Python's get_kernel(require_signature=True), the C++ GetKernelOptions) or for a
// whole deployment through the environment.
namespace kernelhub::loader {

// KERNELHUB_REQUIRE_SIGNATURE: "1", "true", "yes", "on" turn it on; unset, "", "0", "false",
// "no", "off" leave it off; anything else is an error naming the value, so a typo never
// silently disables the check.
util::Expected<bool> signature_required_by_environment();

// A call's option, or the environment's when the call does not say.
util::Expected<bool> signature_required(std::optional<bool> requested);

// Whom a required signature must come from. From the environment: KERNELHUB_SIGSTORE_TRUSTED_ROOT
// (a trusted_root.json path, e.g. of a private Sigstore instance) replaces the production root
// compiled in, and KERNELHUB_SIGNER_WORKFLOWS (GitHub workflow URIs separated by spaces,
// https://github.com/ORG/REPO/.github/workflows/FILE@REF) replaces kernels' DEFAULT_POLICIES.
struct SignerTrust {
  std::optional<verify::TrustedRoot> trusted_root;  // nullopt: the production root
  std::vector<verify::GitHubWorkflowPolicy> policies;
};
util::Expected<SignerTrust> signer_trust_from_environment();

// GitHub workflow URIs grouped into one policy per repository, which each URI names.
util::Expected<std::vector<verify::GitHubWorkflowPolicy>> workflow_policies(
    const std::vector<std::string>& uris);

// Passes only a variant that `verify::verify_signed_variant` calls Success under the trust the
// environment configures (the production root and kernels' default policies unless set), or,
// for a keyed bundle (a private hub's `kernel-builder sign`), under the keys `keys` resolves
// (trusted_keys.hpp; resolved only when the bundle names a key, so Sigstore-signed loads make
// no extra request). The error names the variant folder and says what failed in the reference
// CLI's words (with the reason or the first violations).
util::Expected<void> require_signed_variant(const std::filesystem::path& variant_dir,
                                            const KeyOptions& keys = {});

// The refusal text for a failed check (exposed for tests and for callers with own policies).
std::string signature_refusal(const std::filesystem::path& variant_dir,
                              const verify::SignatureCheck& check);

}  // namespace kernelhub::loader
