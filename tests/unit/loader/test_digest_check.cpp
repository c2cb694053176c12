// SPDX-License-Identifier: Apache-2.0
// The digest check of every Hub load (issue 20 item 9) and the stamped hashes that make it
// cheap: a cached variant whose files differ from its metadata.json's digest is refused with the
// file named, a link to a folder is refused, bytecode is left alone, and a stamped blob is not
// read twice.
#include <kernelhub/loader/digest_check.hpp>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include <kernelhub/hub/content_hash.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>
#include <kernelhub/util/file_io.hpp>

#include "loader_test_support.hpp"

namespace kernelhub::loader {
namespace {

namespace fs = std::filesystem;

// A cache repository folder with every file of the variant a link to blobs/<git sha1>, as
// snapshot_download leaves it; metadata.json records the digest of `files` unless told not to.
struct CachedVariant {
  fs::path repo;
  fs::path variant;
  fs::path stamps;

  fs::path add_blob(const std::string& relative, const std::string& content) const {
    const auto blob = repo / "blobs" / hub::git_blob_sha1(content);
    if (!fs::exists(blob)) {
      testing::write(blob, content);
    }
    const auto link = variant / relative;
    fs::create_directories(link.parent_path());
    fs::remove(link);
    fs::create_symlink(fs::relative(blob, link.parent_path()), link);
    return blob;
  }
};

CachedVariant make_cached(const fs::path& root,
                          const std::vector<std::pair<std::string, std::string>>& files,
                          bool with_digest = true) {
  fs::remove_all(root);
  CachedVariant cached{root / "kernels--org--relu",
                       root / "kernels--org--relu" / "snapshots" / std::string(40, 'a') / "build" /
                           "torch-cpu",
                       root / ".kernelhub" / "verified"};
  fs::create_directories(cached.variant);
  for (const auto& [relative, content] : files) {
    cached.add_blob(relative, content);
  }
  auto meta = *metadata::parse_metadata(testing::metadata_json("relu", "_relu_cpu_1"));
  if (with_digest) {
    meta.digest = *metadata::hash_variant(metadata::DigestAlgorithm::sha256, cached.variant);
  }
  const auto text = root / "metadata.json.tmp";
  EXPECT_TRUE(metadata::write_metadata_file(text, meta));
  cached.add_blob("metadata.json", *util::read_file(text));
  fs::remove(text);
  return cached;
}

TEST(DigestCheck, AMatchingVariantPassesAndIsNotReadTwice) {
  const auto cached = make_cached("dc-match", {{"__init__.py", "x = 1\n"}, {"ops/a.py", "y\n"}});
  // The blob check stamps the blobs first, as install_hub_kernel does.
  ASSERT_TRUE(find_corrupt_files(cached.variant, cached.stamps));
  DigestCheckStats first;
  ASSERT_TRUE(check_cached_variant_digest(cached.variant, cached.stamps, &first));
  EXPECT_TRUE(first.checked);
  EXPECT_EQ(first.hashes.files, 2u);
  EXPECT_EQ(first.hashes.hashed, 2u);  // git sha1 blobs: the sha256 is read once, then stamped
  DigestCheckStats second;
  ASSERT_TRUE(check_cached_variant_digest(cached.variant, cached.stamps, &second));
  EXPECT_EQ(second.hashes.files, 2u);
  EXPECT_EQ(second.hashes.hashed, 0u);
  // The blob check still accepts the stamp that now carries the hash.
  BlobVerifyStats blobs;
  const auto corrupt = find_corrupt_files(cached.variant, cached.stamps, &blobs);
  ASSERT_TRUE(corrupt);
  EXPECT_TRUE(corrupt->empty());
  EXPECT_EQ(blobs.hashed, 0u);
}

TEST(DigestCheck, AFileChangedAfterHashingIsRefusedByName) {
  const auto cached = make_cached("dc-changed", {{"__init__.py", "x = 1\n"}});
  // The hub's file changed after the digest was written (a new blob, correctly named), so the
  // blob check has nothing to say; the digest check does.
  cached.add_blob("__init__.py", "x = 2  # changed after signing\n");
  ASSERT_TRUE(find_corrupt_files(cached.variant, cached.stamps));
  const auto refused = check_cached_variant_digest(cached.variant, cached.stamps);
  ASSERT_FALSE(refused);
  const auto& message = refused.error().message;
  EXPECT_NE(message.find("refusing to load kernel variant"), std::string::npos) << message;
  EXPECT_NE(message.find("kernel integrity check failed\nFile hash mismatch for __init__.py"),
            std::string::npos)
      << message;

  const auto extra = make_cached("dc-extra", {{"__init__.py", "x = 1\n"}});
  extra.add_blob("injected.py", "import os\n");
  const auto unknown = check_cached_variant_digest(extra.variant, extra.stamps);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("Unknown file: injected.py"), std::string::npos);
}

TEST(DigestCheck, ALinkToAFolderIsRefusedAndBytecodeIsLeftAlone) {
  const auto cached = make_cached("dc-links", {{"__init__.py", "x = 1\n"}});
  testing::write("dc-links/elsewhere/__init__.py", "print('not signed')\n");
  fs::create_symlink(fs::absolute("dc-links/elsewhere"), cached.variant / "ops");
  const auto refused = check_cached_variant_digest(cached.variant, cached.stamps);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("\"ops\" is a link to a folder"), std::string::npos)
      << refused.error().message;

  const auto bytecode = make_cached("dc-bytecode", {{"__init__.py", "x = 1\n"}});
  testing::write(bytecode.variant / "__pycache__" / "__init__.cpython-311.pyc", "bytes");
  testing::write(bytecode.variant / "helper.pyc", "bytes");
  EXPECT_TRUE(check_cached_variant_digest(bytecode.variant, bytecode.stamps));
}

TEST(DigestCheck, AVariantWithoutADigestHasNothingToCheck) {
  const auto cached = make_cached("dc-none", {{"__init__.py", "x = 1\n"}}, /*with_digest=*/false);
  cached.add_blob("__init__.py", "anything\n");
  DigestCheckStats stats;
  EXPECT_TRUE(check_cached_variant_digest(cached.variant, cached.stamps, &stats));
  EXPECT_FALSE(stats.checked);
  fs::create_directories("dc-bare");
  EXPECT_TRUE(check_cached_variant_digest("dc-bare", {}));
}

TEST(StampedFileHash, AnLfsBlobIsNamedByItsSha256AndAChangedBlobIsRehashed) {
  const std::string content = "large library\n";
  const auto cached = make_cached("sfh", {{"__init__.py", "x = 1\n"}});
  const auto lfs = cached.repo / "blobs" / hub::sha256_hex(content);
  testing::write(lfs, content);
  fs::create_symlink(fs::relative(lfs, cached.variant), cached.variant / "lib.so");
  ASSERT_TRUE(find_corrupt_files(cached.variant, cached.stamps));
  StampedHashStats stats;
  const auto hash = stamped_file_hash(metadata::DigestAlgorithm::sha256, cached.variant / "lib.so",
                                      cached.stamps, &stats);
  ASSERT_TRUE(hash);
  EXPECT_EQ(*hash, *metadata::hash_file(metadata::DigestAlgorithm::sha256, lfs));
  EXPECT_EQ(stats.hashed, 0u);

  // sha512 is read once and recorded beside the stamp.
  StampedHashStats sha512;
  const auto init = cached.variant / "__init__.py";
  ASSERT_TRUE(stamped_file_hash(metadata::DigestAlgorithm::sha512, init, cached.stamps, &sha512));
  ASSERT_TRUE(stamped_file_hash(metadata::DigestAlgorithm::sha512, init, cached.stamps, &sha512));
  EXPECT_EQ(sha512.hashed, 1u);

  // A blob changed behind the stamp's back (a new size, so no clock tick is needed to tell)
  // no longer matches it: read again, whatever the stamp recorded.
  const auto blob = fs::canonical(init);
  testing::write(blob, "x = 333\n");
  StampedHashStats changed;
  const auto rehashed =
      stamped_file_hash(metadata::DigestAlgorithm::sha512, init, cached.stamps, &changed);
  ASSERT_TRUE(rehashed);
  EXPECT_EQ(changed.hashed, 1u);
  EXPECT_EQ(*rehashed, *metadata::hash_file(metadata::DigestAlgorithm::sha512, blob));

  // A plain file (not a cache link) is always read.
  testing::write("sfh/plain.py", "z\n");
  StampedHashStats plain;
  ASSERT_TRUE(stamped_file_hash(metadata::DigestAlgorithm::sha256, "sfh/plain.py", cached.stamps,
                                &plain));
  EXPECT_EQ(plain.hashed, 1u);
}

}  // namespace
}  // namespace kernelhub::loader
