// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include <kernelhub/util/expected.hpp>
#include <kernelhub/verify/crypto.hpp>

// Who may have signed a variant: kernels' GitHubWorkflowPolicy (signatures.md §1.3), a GitHub
// Actions workflow of one repository, named by its build-signer URIs. The Fulcio certificate
// carries the identity in extensions; the SAN is not consulted, as in the reference.
namespace kernelhub::verify {

struct GitHubWorkflowPolicy {
  std::string repo_id;                   // "org/repo"
  std::vector<std::string> signer_uris;  // ".../.github/workflows/x.yaml@refs/heads/main"
};

// kernels' DEFAULT_POLICIES: the kernels-community build workflows.
const std::vector<GitHubWorkflowPolicy>& default_policies();

// Both OIDC issuer extensions (v1 raw and v2 DER) equal GitHub Actions', the source
// repository URI is the policy's and the build-signer URI one of its list. The error names the
// first check that failed.
util::Expected<void> check_policy(X509* leaf, const GitHubWorkflowPolicy& policy);

// Any rule on the signing certificate, run where sigstore calls `policy.verify(cert)` (after the
// chain, the SCT and the code-signing profile, before the log entry); its error becomes the
// reason of SignatureVerificationFailure. kernelhub.verify passes the caller's sigstore
// policies through it; check_any_policy below is the one every other caller uses.
using IdentityCheck = std::function<util::Expected<void>(X509* leaf)>;

// Any of the policies; the reference's wording "0 of N policies succeeded" when none does
// (also for an empty list, which never means "the defaults").
util::Expected<void> check_any_policy(X509* leaf, std::span<const GitHubWorkflowPolicy> policies);

}  // namespace kernelhub::verify
