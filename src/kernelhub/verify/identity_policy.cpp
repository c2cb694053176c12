// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/verify/identity_policy.hpp>

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include <kernelhub/verify/check.hpp>

#include <kernelhub/verify/signing_certificate.hpp>

namespace kernelhub::verify {

namespace {

constexpr std::string_view k_github_issuer = "https://token.actions.githubusercontent.com";
constexpr std::string_view k_issuer_v1_oid = "1.3.6.1.4.1.57264.1.1";
constexpr std::string_view k_issuer_v2_oid = "1.3.6.1.4.1.57264.1.8";
constexpr std::string_view k_build_signer_uri_oid = "1.3.6.1.4.1.57264.1.9";
constexpr std::string_view k_source_repository_uri_oid = "1.3.6.1.4.1.57264.1.12";

util::Expected<void> expect_extension(X509* leaf, std::string_view oid, ExtensionEncoding encoding,
                                      std::string_view name, std::string_view expected) {
  const std::optional<std::string> value = fulcio_extension(leaf, oid, encoding);
  if (!value) {
    return util::fail(fmt::format("Certificate does not contain {} ({}) extension", name, oid));
  }
  if (*value != expected) {
    return util::fail(fmt::format("Certificate's {} does not match (got '{}', expected '{}')",
                                  name, *value, expected));
  }
  return {};
}

}  // namespace

const std::vector<GitHubWorkflowPolicy>& default_policies() {
  static const std::vector<GitHubWorkflowPolicy> k_policies = [] {
    const std::string workflows = "https://github.com/huggingface/kernels-community/.github/workflows/";
    // sign-old-builds.yaml signed the builds that predate signing (Torch 2.10-2.12).
    return std::vector<GitHubWorkflowPolicy>{
        {"huggingface/kernels-community",
         {workflows + "build.yaml@refs/heads/main", workflows + "build-mac.yaml@refs/heads/main",
          workflows + "build-windows.yaml@refs/heads/main",
          workflows + "sign-old-builds.yaml@refs/heads/main"}}};
  }();
  return k_policies;
}

util::Expected<void> check_policy(X509* leaf, const GitHubWorkflowPolicy& policy) {
  // An empty signer list would accept nothing; the reference refuses to construct it.
  if (policy.signer_uris.empty()) {
    return util::fail("At least one signer URI must be provided");
  }
  KH_CHECK(expect_extension(leaf, k_issuer_v1_oid, ExtensionEncoding::raw, "OIDC issuer",
                          k_github_issuer));
  KH_CHECK(expect_extension(leaf, k_issuer_v2_oid, ExtensionEncoding::der_utf8_string,
                          "OIDC issuer (v2)", k_github_issuer));
  KH_CHECK(expect_extension(leaf, k_source_repository_uri_oid, ExtensionEncoding::der_utf8_string,
                          "source repository URI", "https://github.com/" + policy.repo_id));
  const std::optional<std::string> signer =
      fulcio_extension(leaf, k_build_signer_uri_oid, ExtensionEncoding::der_utf8_string);
  const bool allowed = signer && std::find(policy.signer_uris.begin(), policy.signer_uris.end(),
                                           *signer) != policy.signer_uris.end();
  if (!allowed) {
    return util::fail(fmt::format("0 of {} policies succeeded", policy.signer_uris.size()));
  }
  return {};
}

util::Expected<void> check_any_policy(X509* leaf, std::span<const GitHubWorkflowPolicy> policies) {
  for (const GitHubWorkflowPolicy& policy : policies) {
    if (check_policy(leaf, policy)) {
      return {};
    }
  }
  return util::fail(fmt::format("0 of {} policies succeeded", policies.size()));
}

}  // namespace kernelhub::verify
