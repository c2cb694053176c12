// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/verify/bundle.hpp>
#include <kernelhub/verify/identity_policy.hpp>
#include <kernelhub/verify/signing_certificate.hpp>

#include "verify_test_data.hpp"

using namespace kernelhub::verify;

namespace {

Certificate conformance_leaf() {
  auto bundle = parse_bundle(test::conformance_file("happy-path-v0.3/bundle.sigstore.json"));
  return bundle.value().leaf;
}

}  // namespace

TEST(VerifyIdentityPolicy, DefaultPoliciesAreKernelsCommunityWorkflows) {
  const auto& policies = default_policies();
  ASSERT_EQ(policies.size(), 1u);
  EXPECT_EQ(policies[0].repo_id, "huggingface/kernels-community");
  ASSERT_EQ(policies[0].signer_uris.size(), 4u);
  EXPECT_EQ(policies[0].signer_uris[3],
            "https://github.com/huggingface/kernels-community/.github/workflows/"
            "sign-old-builds.yaml@refs/heads/main");
}

TEST(VerifyIdentityPolicy, ReadsRawAndDerFulcioExtensions) {
  const Certificate leaf = conformance_leaf();
  EXPECT_EQ(fulcio_extension(leaf.get(), "1.3.6.1.4.1.57264.1.1", ExtensionEncoding::raw),
            "https://token.actions.githubusercontent.com");
  EXPECT_EQ(fulcio_extension(leaf.get(), "1.3.6.1.4.1.57264.1.8",
                             ExtensionEncoding::der_utf8_string),
            "https://token.actions.githubusercontent.com");
  EXPECT_EQ(fulcio_extension(leaf.get(), "1.3.6.1.4.1.57264.1.12",
                             ExtensionEncoding::der_utf8_string),
            "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon");
  EXPECT_FALSE(fulcio_extension(leaf.get(), "1.3.6.1.4.1.57264.1.99", ExtensionEncoding::raw));
}

TEST(VerifyIdentityPolicy, EveryPartOfTheWorkflowIdentityCounts) {
  const Certificate leaf = conformance_leaf();
  EXPECT_TRUE(check_policy(leaf.get(), test::conformance_policy()));

  GitHubWorkflowPolicy repo = test::conformance_policy();
  repo.repo_id = "sigstore-conformance/other";
  auto wrong_repo = check_policy(leaf.get(), repo);
  ASSERT_FALSE(wrong_repo);
  EXPECT_NE(wrong_repo.error().message.find("source repository URI"), std::string::npos);

  GitHubWorkflowPolicy signer = test::conformance_policy();
  signer.signer_uris = {signer.signer_uris[0] + "x", "y"};
  EXPECT_EQ(check_policy(leaf.get(), signer).error().message, "0 of 2 policies succeeded");
  signer.signer_uris.push_back(test::conformance_policy().signer_uris[0]);
  EXPECT_TRUE(check_policy(leaf.get(), signer));

  GitHubWorkflowPolicy empty = test::conformance_policy();
  empty.signer_uris.clear();
  EXPECT_FALSE(check_policy(leaf.get(), empty));

  const std::vector<GitHubWorkflowPolicy> either = {repo, test::conformance_policy()};
  EXPECT_TRUE(check_any_policy(leaf.get(), either));
  EXPECT_EQ(check_any_policy(leaf.get(), std::vector{repo}).error().message,
            "0 of 1 policies succeeded");
}
