// SPDX-License-Identifier: Apache-2.0
// `kernel-builder hash` names a special file instead of leaving it out of the digest (issue
// 12, item 13).
#include <kernelhub/metadata/digest.hpp>

#include <filesystem>
#include <fstream>

#include <sys/stat.h>

#include <gtest/gtest.h>

namespace kernelhub::metadata {
namespace {

namespace fs = std::filesystem;

TEST(DigestSpecialFiles, AFifoInAVariantIsAnErrorNamingIt) {
  const fs::path variant = "digest-fifo/torch-cpu";
  fs::remove_all("digest-fifo");
  fs::create_directories(variant / "relu");
  std::ofstream(variant / "relu" / "__init__.py") << "x = 1\n";
  ASSERT_EQ(::mkfifo((variant / "relu" / "pipe").c_str(), 0600), 0);
  const auto digest = hash_variant(DigestAlgorithm::sha256, variant);
  ASSERT_FALSE(digest);
  EXPECT_NE(digest.error().message.find("relu/pipe"), std::string::npos) << digest.error().message;
  EXPECT_NE(digest.error().message.find("FIFO"), std::string::npos);
}

TEST(DigestSpecialFiles, ALinkToADeviceIsAnErrorNamingIt) {
  const fs::path variant = "digest-dev/torch-cpu";
  fs::remove_all("digest-dev");
  fs::create_directories(variant);
  std::ofstream(variant / "__init__.py") << "x = 1\n";
  fs::create_symlink("/dev/zero", variant / "zeros.bin");
  const auto digest = hash_variant(DigestAlgorithm::sha256, variant);
  ASSERT_FALSE(digest);
  EXPECT_NE(digest.error().message.find("zeros.bin"), std::string::npos) << digest.error().message;
  EXPECT_NE(digest.error().message.find("character device"), std::string::npos);
}

TEST(DigestSpecialFiles, FoldersAndLinksToFilesStillHash) {
  const fs::path variant = "digest-ok/torch-cpu";
  fs::remove_all("digest-ok");
  fs::create_directories(variant / "sub");
  std::ofstream(variant / "sub" / "a.py") << "a\n";
  fs::create_symlink("sub/a.py", variant / "b.py");
  const auto digest = hash_variant(DigestAlgorithm::sha256, variant);
  ASSERT_TRUE(digest) << digest.error().message;
  EXPECT_EQ(digest->files.size(), 2u);
}

}  // namespace
}  // namespace kernelhub::metadata
