// SPDX-License-Identifier: Apache-2.0
// The blob check's stamp (issue 12, item 11): a cached file rewritten in place at the same size
// with its mtime put back is still caught, because ctime moved.
#include <kernelhub/loader/blob_verify.hpp>

#include <chrono>
#include <filesystem>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <kernelhub/hub/content_hash.hpp>

#include "loader_test_support.hpp"

namespace kernelhub::loader {
namespace {

namespace fs = std::filesystem;

struct Layout {
  fs::path variant;
  fs::path blob;
  fs::path stamps;
};

// <root>/kernels--org--relu/blobs/<sha1> and a variant folder linking to it, as the cache has.
Layout make_layout(const fs::path& root, const std::string& content) {
  fs::remove_all(root);
  const auto repo = root / "kernels--org--relu";
  const auto blob = repo / "blobs" / hub::git_blob_sha1(content);
  testing::write(blob, content);
  const auto variant = repo / "snapshots" / std::string(40, 'a') / "build" / "torch-cpu";
  fs::create_directories(variant);
  fs::create_symlink(fs::path("../../../../blobs") / blob.filename(), variant / "__init__.py");
  return {variant, blob, root / ".kernelhub" / "verified"};
}

// Rewrites the file's bytes in place (same inode, same size) and sets its mtime back, as a
// user covering their tracks would.
void rewrite_in_place_keeping_mtime(const fs::path& file, const std::string& content) {
  struct stat before {};
  ASSERT_EQ(::stat(file.c_str(), &before), 0);
  // A later clock tick than the blob's last change, so the kernel gives the write a new ctime.
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const int fd = ::open(file.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, content.data(), content.size(), 0), static_cast<ssize_t>(content.size()));
  const timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::futimens(fd, times), 0);
  ::close(fd);
  struct stat after {};
  ASSERT_EQ(::stat(file.c_str(), &after), 0);
  ASSERT_EQ(after.st_size, before.st_size);
  ASSERT_EQ(after.st_ino, before.st_ino);
  ASSERT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
  ASSERT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
}

TEST(BlobVerify, AStampedBlobIsNotHashedAgain) {
  const auto layout = make_layout("bv-stamped", "x = 1\n");
  BlobVerifyStats first;
  ASSERT_TRUE(find_corrupt_files(layout.variant, layout.stamps, &first));
  EXPECT_EQ(first.hashed, 1u);
  BlobVerifyStats second;
  const auto again = find_corrupt_files(layout.variant, layout.stamps, &second);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->empty());
  EXPECT_EQ(second.files, 1u);
  EXPECT_EQ(second.hashed, 0u);
}

TEST(BlobVerify, ARewriteWithItsMtimeRestoredIsCaught) {
  const auto layout = make_layout("bv-rewrite", "x = 1\n");
  ASSERT_TRUE(find_corrupt_files(layout.variant, layout.stamps));
  rewrite_in_place_keeping_mtime(layout.blob, "x = 2\n");
  BlobVerifyStats stats;
  const auto caught = find_corrupt_files(layout.variant, layout.stamps, &stats);
  ASSERT_TRUE(caught);
  EXPECT_EQ(stats.hashed, 1u);
  ASSERT_EQ(caught->size(), 1u);
  EXPECT_EQ(caught->front().relative_path, "__init__.py");
}

TEST(BlobVerify, AChmodAloneCostsARehashButNoError) {
  const auto layout = make_layout("bv-chmod", "x = 1\n");
  ASSERT_TRUE(find_corrupt_files(layout.variant, layout.stamps));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  fs::permissions(layout.blob, fs::perms::owner_read, fs::perm_options::remove);
  fs::permissions(layout.blob, fs::perms::owner_read, fs::perm_options::add);
  BlobVerifyStats stats;
  const auto result = find_corrupt_files(layout.variant, layout.stamps, &stats);
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->empty());
  EXPECT_EQ(stats.hashed, 1u);
}

}  // namespace
}  // namespace kernelhub::loader
