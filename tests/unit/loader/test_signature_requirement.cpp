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
  explicit ScopedVariable(const char* value) {
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
  static constexpr const char* k_name = "KERNELHUB_REQUIRE_SIGNATURE";
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

}  // namespace
}  // namespace kernelhub::loader
