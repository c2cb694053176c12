// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include <kernelhub/metadata/digest.hpp>

#include "../test_support.hpp"

using namespace kernelhub::metadata;
namespace fs = std::filesystem;

namespace {

using kernelhub::testing::write;

Digest digest_of(std::initializer_list<std::pair<const std::string, std::string>> files) {
  return Digest{DigestAlgorithm::sha256, files};
}

}  // namespace

// Expected values from the reference's own tests (digest.rs) and `sha256sum | base64`.
TEST(Digest, HashesWithSha256AndSha512AsStandardBase64) {
  write("v/_extension.so", "hello world");
  auto sha256 = hash_variant(DigestAlgorithm::sha256, "v");
  ASSERT_TRUE(sha256) << sha256.error().message;
  EXPECT_EQ(sha256->files, (std::map<std::string, std::string>{
                               {"_extension.so", "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek="}}));
  auto sha512 = hash_variant(DigestAlgorithm::sha512, "v");
  ASSERT_TRUE(sha512);
  EXPECT_EQ(sha512->files.at("_extension.so"),
            "MJ7MSJwS1utMxA9QyQLytNDtd+5RGnx6m808qG1M2G+YndNbxf9JlnDaNCVbRbDP2DDoH2Bdz33FVC6TrpzXbw==");
  EXPECT_EQ(sha512->algorithm, DigestAlgorithm::sha512);
}

TEST(Digest, SkipsTopLevelMetadataBytecodeAndCaches) {
  write("v/a.so", "a");
  write("v/metadata.json", "{}");
  write("v/metadata.json.sigstore", "sig");
  write("v/sub/metadata.json", "{}");
  write("v/sub/metadata.json.sigstore", "sig");
  write("v/pkg/__pycache__/m.cpython-312.pyc", "b");
  write("v/pkg/__pycache__/notes.txt", "n");
  write("v/payload.pyc", "p");
  write("v/.pyc", "a dotfile, not an extension");
  write("v/some/dir/__init__.py", "d");
  auto digest = hash_variant(DigestAlgorithm::sha256, "v");
  ASSERT_TRUE(digest);
  std::vector<std::string> keys;
  for (const auto& [key, hash] : digest->files) {
    keys.push_back(key);
  }
  EXPECT_EQ(keys, (std::vector<std::string>{".pyc", "a.so", "some/dir/__init__.py",
                                            "sub/metadata.json", "sub/metadata.json.sigstore"}));
}

TEST(Digest, FollowsFileLinksButNotDirectoryLinks) {
  write("outside/file.py", "x");
  write("outside/dir/inner.py", "y");
  write("v/real.py", "x");
  fs::create_directory_symlink(fs::absolute("outside/dir"), "v/linked_dir");
  fs::create_symlink(fs::absolute("outside/file.py"), "v/link.py");
  auto digest = hash_variant(DigestAlgorithm::sha256, "v");
  ASSERT_TRUE(digest);
  EXPECT_EQ(digest->files.size(), 2u);
  EXPECT_EQ(digest->files.at("link.py"), digest->files.at("real.py"));
}

// Issue 20 item 2: what the digest skips is listed, so verify and verify-signature can say
// that the folder holds more than what was signed.
TEST(Digest, ListsWhatItDoesNotCover) {
  write("outside/dir/inner.py", "y");
  write("v/a.so", "a");
  write("v/metadata.json", "{}");
  write("v/metadata.json.sigstore", "sig");
  write("v/pkg/__pycache__/m.cpython-311.pyc", "b");
  write("v/pkg/__pycache__/notes.txt", "n");
  write("v/helper.pyc", "p");
  fs::create_directory_symlink(fs::absolute("outside/dir"), "v/ops");
  auto files = hash_variant_files(DigestAlgorithm::sha256, "v");
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_EQ(files->uncovered, (std::vector<std::string>{"helper.pyc", "ops/",
                                                        "pkg/__pycache__/m.cpython-311.pyc",
                                                        "pkg/__pycache__/notes.txt"}));
  EXPECT_EQ(files->digest, *hash_variant(DigestAlgorithm::sha256, "v"));
}

TEST(Digest, TakesEachHashFromTheHasherWhenGivenOne) {
  write("v/a.so", "a");
  write("v/sub/b.py", "b");
  std::vector<std::string> asked;
  auto files = hash_variant_files(DigestAlgorithm::sha512, "v",
                                  [&](DigestAlgorithm algorithm, const fs::path& file) {
                                    EXPECT_EQ(algorithm, DigestAlgorithm::sha512);
                                    asked.push_back(file.lexically_relative("v").generic_string());
                                    return kernelhub::util::Expected<std::string>("h");
                                  });
  ASSERT_TRUE(files);
  std::sort(asked.begin(), asked.end());
  EXPECT_EQ(asked, (std::vector<std::string>{"a.so", "sub/b.py"}));
  EXPECT_EQ(files->digest.files, (std::map<std::string, std::string>{{"a.so", "h"},
                                                                     {"sub/b.py", "h"}}));
  EXPECT_EQ(*hash_file(DigestAlgorithm::sha512, "v/a.so"),
            hash_variant(DigestAlgorithm::sha512, "v")->files.at("a.so"));
}

TEST(Digest, FailsOnDanglingLinksAndMissingDirectories) {
  write("v/a.py", "a");
  fs::create_symlink("nowhere", "v/broken.py");
  EXPECT_FALSE(hash_variant(DigestAlgorithm::sha256, "v"));
  EXPECT_FALSE(hash_variant(DigestAlgorithm::sha256, "missing"));
}

TEST(Digest, EmptyDirectoryHasNoFiles) {
  fs::create_directory("v");
  auto digest = hash_variant(DigestAlgorithm::sha256, "v");
  ASSERT_TRUE(digest);
  EXPECT_TRUE(digest->files.empty());
}

TEST(Digest, AlgorithmNames) {
  EXPECT_EQ(to_string(DigestAlgorithm::sha512), "sha512");
  EXPECT_EQ(digest_algorithm_from_name("sha256"), DigestAlgorithm::sha256);
  EXPECT_FALSE(digest_algorithm_from_name("SHA256"));
}

TEST(DigestValidation, MatchingDigestsHaveNoViolations) {
  const auto d = digest_of({{"a.so", "aaa"}, {"b.py", "bbb"}});
  EXPECT_TRUE(validate(d, d).empty());
}

TEST(DigestValidation, CollectsEveryViolationInTheReferenceOrder) {
  const auto expected = digest_of({{"keep.so", "k"}, {"gone.py", "g"}, {"changed.so", "old"}});
  const auto actual = digest_of({{"keep.so", "k"}, {"changed.so", "new"}, {"extra.bin", "e"}});
  const auto violations = validate(expected, actual);
  ASSERT_EQ(violations.size(), 3u);
  EXPECT_EQ(violations[0].kind, DigestViolation::Kind::hash_mismatch);
  EXPECT_EQ(describe(violations),
            "kernel does not match the expected digest:\n"
            "File hash mismatch for changed.so: expected: old, got: new\n"
            "Missing file: gone.py\n"
            "Unknown file: extra.bin");
}

TEST(DigestValidation, ReportsAlgorithmMismatchFirst) {
  Digest expected = digest_of({{"a", "1"}});
  Digest actual{DigestAlgorithm::sha512, {{"a", "2"}}};
  const auto violations = validate(expected, actual);
  ASSERT_EQ(violations.size(), 2u);
  EXPECT_EQ(violations[0].to_string(), "Algorithm mismatch: expected: SHA256, got: SHA512");
  EXPECT_EQ(violations[1].to_string(), "File hash mismatch for a: expected: 1, got: 2");
}
