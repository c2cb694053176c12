// SPDX-License-Identifier: Apache-2.0
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "../verify/verify_test_data.hpp"
#include "loader_test_support.hpp"
#include <kernelhub/loader/signature_requirement.hpp>

namespace kernelhub::loader {
namespace {

namespace fs = std::filesystem;
using testing::write;

// Sets the variable for one test and restores the previous state.
class ScopedVariable {
 public:
  explicit ScopedVariable(const char* value, const char* name = "KERNELHUB_REQUIRE_SIGNATURE")
      : k_name(name) {
    if (const char* old = std::getenv(k_name)) {
      m_old = old;
    }
    if (value == nullptr) {
      unsetenv(k_name);
    } else {
      setenv(k_name, value, 1);
    }
  }
  ~ScopedVariable() {
    if (m_old) {
      setenv(k_name, m_old->c_str(), 1);
    } else {
      unsetenv(k_name);
    }
  }

 private:
  const char* k_name;
  std::optional<std::string> m_old;
};

TEST(SignatureRequirement, EnvironmentSwitchesItOnAndRefusesTypos) {
  {
    ScopedVariable unset(nullptr);
    EXPECT_EQ(signature_required_by_environment(), false);
    EXPECT_EQ(signature_required(true), true);
  }
  for (const char* on : {"1", "true", "YES", "on"}) {
    ScopedVariable variable(on);
    EXPECT_EQ(signature_required_by_environment(), true) << on;
    EXPECT_EQ(signature_required(std::nullopt), true) << on;
    // The call's own answer wins over the deployment's.
    EXPECT_EQ(signature_required(false), false) << on;
  }
  for (const char* off : {"", "0", "False", "off", "no"}) {
    ScopedVariable variable(off);
    EXPECT_EQ(signature_required_by_environment(), false) << off;
  }
  ScopedVariable typo("ture");
  const auto result = signature_required_by_environment();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message,
            "KERNELHUB_REQUIRE_SIGNATURE=\"ture\" is not a boolean; use 1 or 0");
}

TEST(SignatureRequirement, UnsignedAndForeignSignedVariantsAreRefused) {
  write("unsigned/metadata.json", testing::metadata_json("relu", "_relu_cpu_1"));
  const auto unsigned_ = require_signed_variant("unsigned");
  ASSERT_FALSE(unsigned_);
  EXPECT_EQ(unsigned_.error().message,
            "refusing to load kernel variant \"unsigned\" (signature required): signature not "
            "found (no metadata.json.sigstore)");

  // A real Sigstore signature, but by the conformance beacon, not kernels-community.
  write("foreign/metadata.json", verify::test::conformance_file("a.txt"));
  write("foreign/metadata.json.sigstore",
        verify::test::conformance_file("happy-path-v0.3/bundle.sigstore.json"));
  const auto foreign = require_signed_variant("foreign");
  ASSERT_FALSE(foreign);
  EXPECT_NE(foreign.error().message.find("metadata signature verification failed: 0 of 1 "
                                         "policies succeeded"),
            std::string::npos)
      << foreign.error().message;
}

TEST(SignatureRequirement, RefusalListsTheFirstViolations) {
  verify::SignatureCheck check;
  check.status = verify::SignatureStatus::digest_mismatch;
  for (int i = 0; i < 7; ++i) {
    check.violations.push_back({metadata::DigestViolation::Kind::missing_file,
                                "f" + std::to_string(i), "", ""});
  }
  const std::string text = signature_refusal("v", check);
  EXPECT_NE(text.find("kernel integrity check failed\n"), std::string::npos);
  EXPECT_NE(text.find("f4"), std::string::npos);
  EXPECT_EQ(text.find("f5"), std::string::npos);
  EXPECT_NE(text.find("... and 2 more"), std::string::npos);
}

TEST(SignatureRequirement, EnvironmentNamesOtherSignersAndAnotherRoot) {
  write("foreign/metadata.json", verify::test::conformance_file("a.txt"));
  write("foreign/metadata.json.sigstore",
        verify::test::conformance_file("happy-path-v0.3/bundle.sigstore.json"));
  {
    // The conformance beacon trusted: its signature passes and the next step refuses a.txt.
    ScopedVariable signers(verify::test::conformance_policy().signer_uris[0].c_str(),
                           "KERNELHUB_SIGNER_WORKFLOWS");
    const auto trust = signer_trust_from_environment();
    ASSERT_TRUE(trust) << trust.error().message;
    ASSERT_EQ(trust->policies.size(), 1u);
    EXPECT_EQ(trust->policies[0].repo_id,
              "sigstore-conformance/extremely-dangerous-public-oidc-beacon");
    const auto result = require_signed_variant("foreign");
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("invalid metadata: Cannot parse metadata"),
              std::string::npos)
        << result.error().message;
  }
  {
    ScopedVariable signers("https://gitlab.com/a/b", "KERNELHUB_SIGNER_WORKFLOWS");
    const auto result = require_signed_variant("foreign");
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().message.rfind("KERNELHUB_SIGNER_WORKFLOWS: \"https://gitlab.com/a/b\"", 0),
              0u)
        << result.error().message;
  }
  {
    // Another root: the production CA is unknown to the rekor2 staging root.
    const std::string root = (verify::test::conformance_dir() /
                              "rekor2-happy-path/trusted_root.json").string();
    ScopedVariable signers(verify::test::conformance_policy().signer_uris[0].c_str(),
                           "KERNELHUB_SIGNER_WORKFLOWS");
    ScopedVariable staging(root.c_str(), "KERNELHUB_SIGSTORE_TRUSTED_ROOT");
    const auto result = require_signed_variant("foreign");
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("metadata signature verification failed"),
              std::string::npos)
        << result.error().message;
    ScopedVariable missing("/nonexistent/trusted_root.json", "KERNELHUB_SIGSTORE_TRUSTED_ROOT");
    EXPECT_EQ(require_signed_variant("foreign").error().message.rfind(
                  "KERNELHUB_SIGSTORE_TRUSTED_ROOT: ", 0),
              0u);
  }
}

}  // namespace
}  // namespace kernelhub::loader
