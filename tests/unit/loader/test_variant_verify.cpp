// SPDX-License-Identifier: Apache-2.0
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../cache/fake_hub.hpp"
#include "loader_test_support.hpp"
#include <kernelhub/loader/variant_verify.hpp>
#include <kernelhub/metadata/metadata.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>

namespace kernelhub::loader {
namespace {

namespace fs = std::filesystem;
using Kind = metadata::DigestViolation::Kind;
using testing::metadata_json;
using testing::write;

// A variant whose metadata.json records the digest of its files (as `kernel-builder hash
// --write` leaves it).
void make_signed_variant(const fs::path& dir, metadata::DigestAlgorithm algorithm =
                                                  metadata::DigestAlgorithm::sha256) {
  write(dir / "relu/__init__.py", "from ._ops import ops\n");
  write(dir / "relu/_ops.py", "ops = None\n");
  write(dir / "relu/_relu.abi3.so", std::string("\x7f" "ELF\0\1", 6));
  auto meta = *metadata::parse_metadata(metadata_json("relu", "_relu_cpu_1"));
  meta.digest = *metadata::hash_variant(algorithm, dir);
  ASSERT_TRUE(metadata::write_metadata_file(dir / "metadata.json", meta));
}

std::vector<Kind> kinds(const VariantCheck& check) {
  std::vector<Kind> out;
  for (const auto& violation : check.violations) {
    out.push_back(violation.kind);
  }
  return out;
}

TEST(VariantVerify, AnUntouchedVariantPasses) {
  make_signed_variant("torch-cpu");
  const auto check = verify_variant_digest("torch-cpu");
  EXPECT_EQ(check.status, VerifyStatus::ok) << check.detail;
  EXPECT_TRUE(check.passed());
  EXPECT_EQ(check.files, 3u);
  EXPECT_EQ(check.variant, "torch-cpu");
  EXPECT_TRUE(check.uncovered.empty());
}

// Issue 20 item 2: bytecode is outside the digest (as in the reference), so a folder that holds
// some is not the one that was hashed; nor is one with a link to a folder the digest skips.
TEST(VariantVerify, FilesTheDigestDoesNotCoverFailTheVariant) {
  make_signed_variant("torch-cpu");
  write("torch-cpu/relu/__pycache__/_ops.cpython-312.pyc", "cache");
  write("elsewhere/evil.py", "\n");
  fs::create_directory_symlink(fs::absolute("elsewhere"), "torch-cpu/relu/lib");
  const auto check = verify_variant_digest("torch-cpu");
  EXPECT_EQ(check.status, VerifyStatus::uncovered_files);
  EXPECT_FALSE(check.passed());
  EXPECT_TRUE(check.violations.empty());
  EXPECT_EQ(check.uncovered,
            (std::vector<std::string>{"relu/__pycache__/_ops.cpython-312.pyc", "relu/lib/"}));
  EXPECT_EQ(to_string(check.status), "uncovered-files");
}

TEST(VariantVerify, ChangedExtraAndMissingFilesAreEachReported) {
  make_signed_variant("v");
  write("v/relu/_ops.py", "ops = 1\n");
  write("v/relu/extra.py", "\n");
  fs::remove("v/relu/__init__.py");
  const auto check = verify_variant_digest("v");
  EXPECT_EQ(check.status, VerifyStatus::digest_mismatch);
  EXPECT_FALSE(check.passed());
  EXPECT_EQ(kinds(check), (std::vector<Kind>{Kind::missing_file, Kind::hash_mismatch, Kind::unknown_file}));
  EXPECT_EQ(check.violations[0].to_string(), "Missing file: relu/__init__.py");
  EXPECT_EQ(check.violations[2].to_string(), "Unknown file: relu/extra.py");
  EXPECT_EQ(violation_kind_name(check.violations[1].kind), "HashMismatch");
}

TEST(VariantVerify, MissingMetadataMissingDigestAndBadMetadataAreDistinct) {
  write("none/relu/__init__.py", "\n");
  EXPECT_EQ(verify_variant_digest("none").status, VerifyStatus::metadata_missing);
  testing::make_variant("nodigest", "relu", "_relu_cpu_1");
  EXPECT_EQ(verify_variant_digest("nodigest").status, VerifyStatus::digest_missing);
  write("bad/metadata.json", "{");
  const auto bad = verify_variant_digest("bad");
  EXPECT_EQ(bad.status, VerifyStatus::metadata_invalid);
  EXPECT_FALSE(bad.detail.empty());
  EXPECT_EQ(to_string(VerifyStatus::digest_missing), "digest-missing");
}

TEST(VariantVerify, ADanglingLinkIsUnreadable) {
  make_signed_variant("v");
  fs::create_symlink("nowhere", "v/relu/link.so");
  const auto check = verify_variant_digest("v");
  EXPECT_EQ(check.status, VerifyStatus::unreadable);
  EXPECT_NE(check.detail.find("link.so"), std::string::npos) << check.detail;
}

TEST(VariantVerify, ASha512DigestIsCheckedWithSha512) {
  make_signed_variant("v", metadata::DigestAlgorithm::sha512);
  EXPECT_TRUE(verify_variant_digest("v").passed());
}

TEST(VariantVerify, LocalPathsNameAVariantAKernelOrItsBuildFolder) {
  make_signed_variant("relu/build/torch-cpu");
  make_signed_variant("relu/build/torch29-cxx11-cpu-x86_64-linux");
  fs::create_directories("relu/build/not-a-variant");
  const auto from_kernel = local_variant_dirs("relu");
  ASSERT_TRUE(from_kernel) << from_kernel.error().message;
  EXPECT_EQ(*from_kernel, (std::vector<fs::path>{"relu/build/torch-cpu",
                                                  "relu/build/torch29-cxx11-cpu-x86_64-linux"}));
  EXPECT_EQ(*local_variant_dirs("relu/build"), *from_kernel);
  EXPECT_EQ(*local_variant_dirs("relu/build/torch-cpu"),
            std::vector<fs::path>{"relu/build/torch-cpu"});
  fs::create_directories("empty");
  EXPECT_FALSE(local_variant_dirs("empty"));
  EXPECT_FALSE(local_variant_dirs("absent"));
}

variants::SystemInfo cpu_machine() {
  variants::SystemInfo system;
  system.torch_version = variants::ReleaseVersion::from_parts("2", "9");
  system.cxx11_abi = true;
  return system;
}

TEST(VariantVerify, InstalledVariantsComeFromTheCacheWithoutARequest) {
  auto hub = std::make_shared<cache::testing::FakeHub>();
  const auto client = cache::testing::fake_client(hub, /*offline=*/true);
  const cache::HubCache offline("hub", client);
  const auto repo = *hub::RepoId::parse("org/relu");
  InstalledRequest request;
  request.revision.version = 1;
  request.system = cpu_machine();
  // Nothing cached yet: the error says what to run.
  const auto none = installed_variants(offline, repo, request);
  ASSERT_FALSE(none);

  const fs::path snapshot = fs::path("hub/kernels--org--relu/snapshots") / hub->commit;
  write("hub/kernels--org--relu/refs/v1", hub->commit);
  make_signed_variant(snapshot / "build/torch-cpu");
  make_signed_variant(snapshot / "build/torch29-cxx11-cpu-x86_64-linux");
  make_signed_variant(snapshot / "build/torch29-cxx11-cu128-x86_64-linux");
  const auto chosen = installed_variants(offline, repo, request);
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->revision.label, "v1");
  EXPECT_EQ(chosen->dirs, std::vector<fs::path>{snapshot / "build/torch29-cxx11-cpu-x86_64-linux"});
  request.all_variants = true;
  const auto all = installed_variants(offline, repo, request);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->dirs.size(), 3u);
  EXPECT_TRUE(hub->requests().empty());
  // None of the installed ones fits: the trace says why.
  fs::remove_all(snapshot / "build/torch-cpu");
  fs::remove_all(snapshot / "build/torch29-cxx11-cpu-x86_64-linux");
  request.all_variants = false;
  const auto unfit = installed_variants(offline, repo, request);
  ASSERT_FALSE(unfit);
  EXPECT_NE(unfit.error().message.find("torch29-cxx11-cu128-x86_64-linux"), std::string::npos)
      << unfit.error().message;
}

}  // namespace
}  // namespace kernelhub::loader
