// SPDX-License-Identifier: Apache-2.0
// Blobs read a block at a time from a loose object and from a pack (made by `git gc`), with
// the same bytes libgit2 reads whole; a delta is left to libgit2.
#include <kernelhub/server/repository_blob_reader.hpp>

#include <git2.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "server_test_support.hpp"

namespace kernelhub::server {

namespace {

namespace fs = std::filesystem;

using testing::have_git;

std::string random_bytes(std::size_t size, unsigned seed) {
  std::mt19937 engine(seed);
  std::string bytes(size, '\0');
  for (auto& c : bytes) {
    c = static_cast<char>(engine() & 0xff);
  }
  return bytes;
}

// `git hash-object -w` of `bytes` into the bare repository at `dir`; its oid.
std::string store(const fs::path& dir, const std::string& bytes, const std::string& name) {
  const fs::path file = fs::current_path() / name;
  std::ofstream(file, std::ios::binary) << bytes;
  const std::string command =
      "git --git-dir=" + dir.string() + " hash-object -w " + file.string() + " > oid.txt";
  EXPECT_EQ(std::system(command.c_str()), 0);
  std::string oid;
  std::ifstream("oid.txt") >> oid;
  return oid;
}

std::string read_all(BlobReader& reader) {
  std::string out;
  char block[7000];  // not a divisor of anything: reads end mid-stream
  while (true) {
    const auto n = reader.read(block, sizeof block);
    EXPECT_TRUE(n) << (n ? "" : n.error().message);
    if (!n || *n == 0) {
      return out;
    }
    out.append(block, *n);
  }
}

using testing::RepoCloser;

}  // namespace

TEST(RepositoryBlobReader, LooseAndPackedBlobsStreamTheirBytes) {
  if (!have_git()) {
    GTEST_SKIP() << "needs git";
  }
  git_libgit2_init();
  const fs::path dir = fs::current_path() / "repo.git";
  ASSERT_EQ(std::system(("git init -q --bare " + dir.string()).c_str()), 0);
  const std::string big = random_bytes(3 << 20, 1);
  const std::string oid = store(dir, big, "big.bin");
  git_repository* raw = nullptr;
  ASSERT_EQ(git_repository_open(&raw, dir.c_str()), 0);
  const std::unique_ptr<git_repository, RepoCloser> repo(raw);

  auto loose = open_streamed_blob(repo.get(), oid);
  ASSERT_TRUE(loose && *loose);
  EXPECT_EQ((*loose)->size(), big.size());
  EXPECT_EQ(read_all(**loose), big);

  // Packed (and the loose copy pruned): read from the pack entry, not through libgit2.
  const std::string git = "git --git-dir=" + dir.string();
  ASSERT_EQ(std::system(("echo " + oid + " | " + git + " pack-objects -q " + dir.string() +
                         "/objects/pack/pack > /dev/null && " + git + " prune-packed")
                            .c_str()),
            0);
  ASSERT_FALSE(fs::exists(dir / "objects" / oid.substr(0, 2) / oid.substr(2)));
  git_repository* reopened_raw = nullptr;
  ASSERT_EQ(git_repository_open(&reopened_raw, dir.c_str()), 0);
  const std::unique_ptr<git_repository, RepoCloser> reopened(reopened_raw);
  auto packed = open_streamed_blob(reopened.get(), oid);
  ASSERT_TRUE(packed && *packed) << "a whole blob in a pack is streamed";
  EXPECT_EQ((*packed)->size(), big.size());
  EXPECT_EQ(read_all(**packed), big);

  // An unknown object: no reader (the caller answers through libgit2's lookup).
  auto missing = open_streamed_blob(reopened.get(), std::string(40, '0'));
  ASSERT_TRUE(missing);
  EXPECT_FALSE(*missing);
}

}  // namespace kernelhub::server
