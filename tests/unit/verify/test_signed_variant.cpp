// SPDX-License-Identifier: Apache-2.0
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "../loader/loader_test_support.hpp"
#include "verify_test_data.hpp"
#include <kernelhub/metadata/metadata.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>
#include <kernelhub/verify/signed_variant.hpp>

using namespace kernelhub;
using namespace kernelhub::verify;
namespace fs = std::filesystem;
using loader::testing::metadata_json;
using loader::testing::write;

namespace {

const std::vector<GitHubWorkflowPolicy> k_conformance = {test::conformance_policy()};

SignatureCheck check_real(const fs::path& dir) {
  return verify_signed_variant(dir, k_conformance, production_trusted_root());
}

// A variant whose signature the fake verifier accepts, so the steps after it can be reached.
SignatureCheck check_trusting(const fs::path& dir) {
  return verify_signed_variant(dir, [](std::string_view, const Bundle&) {
    return util::Expected<void>{};
  });
}

void put_real_bundle(const fs::path& dir) {
  write(dir / "metadata.json.sigstore",
        test::conformance_file("happy-path-v0.3/bundle.sigstore.json"));
}

void make_digested_variant(const fs::path& dir) {
  write(dir / "relu/__init__.py", "from ._ops import ops\n");
  write(dir / "relu/_ops.py", "ops = None\n");
  auto meta = *metadata::parse_metadata(metadata_json("relu", "_relu_cpu_1"));
  meta.digest = *metadata::hash_variant(metadata::DigestAlgorithm::sha256, dir);
  ASSERT_TRUE(metadata::write_metadata_file(dir / "metadata.json", meta));
  put_real_bundle(dir);
}

}  // namespace

TEST(VerifySignedVariant, StepsBeforeTheSignatureWithRealBundles) {
  write("missing/metadata.json", "{}");
  EXPECT_EQ(check_real("missing").status, SignatureStatus::bundle_missing);

  write("invalid/metadata.json.sigstore", "{\"mediaType\": 1}");
  const auto invalid = check_real("invalid");
  EXPECT_EQ(invalid.status, SignatureStatus::bundle_invalid);
  EXPECT_FALSE(invalid.reason.empty());

  put_real_bundle("no-metadata");
  EXPECT_EQ(check_real("no-metadata").status, SignatureStatus::metadata_missing);
  // A folder named metadata.json is not a metadata file.
  put_real_bundle("dir-metadata");
  fs::create_directories("dir-metadata/metadata.json");
  EXPECT_EQ(check_real("dir-metadata").status, SignatureStatus::metadata_missing);
}

TEST(VerifySignedVariant, SignatureIsCheckedOverTheExactMetadataBytes) {
  // a.txt is what the conformance bundle signs: the signature passes, then it is no metadata.
  put_real_bundle("signed");
  write("signed/metadata.json", test::conformance_file("a.txt"));
  const auto signed_text = check_real("signed");
  EXPECT_EQ(signed_text.status, SignatureStatus::metadata_invalid) << signed_text.reason;
  EXPECT_EQ(signed_text.reason.rfind("Cannot parse metadata:", 0), 0u) << signed_text.reason;

  // One more byte: the signature fails before the JSON is parsed.
  write("signed/metadata.json", test::conformance_file("a.txt") + "\n");
  const auto tampered = check_real("signed");
  EXPECT_EQ(tampered.status, SignatureStatus::signature_failure);
  EXPECT_EQ(tampered.reason, "Bundle message digest mismatch");

  // Valid metadata with a digest, but not what was signed (and not by kernels-community).
  make_digested_variant("unsigned-digest");
  EXPECT_EQ(check_real("unsigned-digest").status, SignatureStatus::signature_failure);
  EXPECT_EQ(verify_signed_variant("signed", default_policies(), production_trusted_root()).reason,
            "0 of 1 policies succeeded");
}

TEST(VerifySignedVariant, DigestStepsAfterAnAcceptedSignature) {
  make_digested_variant("good");
  write("good/relu/__pycache__/x.pyc", "cache");
  const auto good = check_trusting("good");
  EXPECT_EQ(good.status, SignatureStatus::success) << good.reason;
  EXPECT_TRUE(good.passed());
  // The reference's Success, and what it does not cover (issue 20 item 2).
  EXPECT_EQ(good.uncovered, std::vector<std::string>{"relu/__pycache__/x.pyc"});

  make_digested_variant("changed");
  write("changed/relu/_ops.py", "ops = 1\n");
  write("changed/relu/extra.py", "\n");
  const auto changed = check_trusting("changed");
  EXPECT_EQ(changed.status, SignatureStatus::digest_mismatch);
  ASSERT_EQ(changed.violations.size(), 2u);
  EXPECT_EQ(changed.violations[0].kind, metadata::DigestViolation::Kind::hash_mismatch);
  EXPECT_EQ(changed.violations[1].kind, metadata::DigestViolation::Kind::unknown_file);

  put_real_bundle("no-digest");
  write("no-digest/metadata.json", metadata_json("relu", "_relu_cpu_1"));
  EXPECT_EQ(check_trusting("no-digest").status, SignatureStatus::digest_missing);

  put_real_bundle("bad-json");
  write("bad-json/metadata.json", "{\"version\": ");
  EXPECT_EQ(check_trusting("bad-json").status, SignatureStatus::metadata_invalid);
}

TEST(VerifySignedVariant, KindNamesAreTheReferenceClasses) {
  EXPECT_EQ(kind_name(SignatureStatus::bundle_missing), "SignatureBundleMissing");
  EXPECT_EQ(kind_name(SignatureStatus::digest_mismatch), "DigestVerificationFailure");
  EXPECT_EQ(kind_name(SignatureStatus::signature_failure), "SignatureVerificationFailure");
}
