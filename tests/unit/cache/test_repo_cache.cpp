// SPDX-License-Identifier: Apache-2.0
#include <filesystem>
#include <unistd.h>

#include <gtest/gtest.h>

#include "cache_test_support.hpp"
#include <kernelhub/cache/repo_cache.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::cache {
namespace {

namespace fs = std::filesystem;
using testing::k_commit;
using testing::k_hello_sha1;
using testing::kernel_ref;

TEST(RepoCache, LayoutMatchesHuggingfaceHub) {
  const RepoCache cache("hub", kernel_ref("org/relu"));
  EXPECT_EQ(cache.folder(), fs::path("hub/kernels--org--relu"));
  EXPECT_EQ(cache.blob_path("abc"), fs::path("hub/kernels--org--relu/blobs/abc"));
  EXPECT_EQ(cache.partial_blob_path("abc"), fs::path("hub/kernels--org--relu/blobs/abc.incomplete"));
  EXPECT_EQ(cache.lock_path("abc"), fs::path("hub/.locks/kernels--org--relu/abc.lock"));
  EXPECT_EQ(cache.ref_path("refs/pr/1"), fs::path("hub/kernels--org--relu/refs/refs/pr/1"));
  EXPECT_EQ(cache.tree_file(k_commit), fs::path(std::string("hub/kernels--org--relu/trees/") + k_commit + ".json"));
  EXPECT_EQ(cache.no_exist_file(k_commit, "a/b"),
            fs::path(std::string("hub/kernels--org--relu/.no_exist/") + k_commit + "/a/b"));
  EXPECT_EQ(repo_folder_name({*hub::RepoId::parse("m"), hub::RepoType::model}), "models--m");
}

TEST(RepoCache, RefsHaveNoNewlineAndResolveOffline) {
  const RepoCache cache("hub", kernel_ref());
  ASSERT_TRUE(cache.write_ref("feature/x", k_commit));
  EXPECT_EQ(*util::read_file(cache.ref_path("feature/x")), k_commit);
  EXPECT_EQ(cache.resolve_offline("feature/x"), std::optional<std::string>(k_commit));
  EXPECT_EQ(cache.resolve_offline(testing::k_other_commit),
            std::optional<std::string>(testing::k_other_commit));
  EXPECT_FALSE(cache.resolve_offline("main").has_value());
  // A commit is its own ref: nothing is written for it.
  ASSERT_TRUE(cache.write_ref(k_commit, k_commit));
  EXPECT_FALSE(fs::exists(cache.ref_path(k_commit)));
  EXPECT_EQ(cache.list_refs(), std::vector<std::string>{"feature/x"});
}

// Names as they stand under refs/, sorted, nested ones with '/', temporary files left out;
// also when the cache is reached through a link (its folders are not resolved).
TEST(RepoCache, ListsRefsByTheirNamesUnderRefs) {
  fs::create_directories("real-hub");
  fs::create_directory_symlink("real-hub", "linked-hub");
  const RepoCache cache("linked-hub", kernel_ref());
  ASSERT_TRUE(cache.write_ref("v2", k_commit));
  ASSERT_TRUE(cache.write_ref("v1", k_commit));
  ASSERT_TRUE(cache.write_ref("refs/pr/3", k_commit));
  ASSERT_TRUE(util::write_file_atomic(cache.folder() / "refs" / "v3.1a2b3c4d.tmp", k_commit));
  EXPECT_EQ(cache.list_refs(), (std::vector<std::string>{"refs/pr/3", "v1", "v2"}));
}

TEST(RepoCache, ReadsRefsWrittenWithANewlineAndRejectsGarbage) {
  const RepoCache cache("hub", kernel_ref());
  fs::create_directories(cache.folder() / "refs");
  ASSERT_TRUE(util::write_file_atomic(cache.ref_path("v1"), std::string(k_commit) + "\n"));
  ASSERT_TRUE(util::write_file_atomic(cache.ref_path("v2"), "not a sha"));
  EXPECT_EQ(cache.read_ref("v1"), std::optional<std::string>(k_commit));
  EXPECT_FALSE(cache.read_ref("v2").has_value());
}

TEST(RepoCache, RefusesNamesThatLeaveTheCache) {
  const RepoCache cache("hub", kernel_ref());
  EXPECT_FALSE(cache.write_ref("../../escape", k_commit));
  EXPECT_FALSE(cache.link_snapshot_file(k_commit, "../x", k_hello_sha1));
  EXPECT_FALSE(cache.link_snapshot_file(k_commit, "/etc/passwd", k_hello_sha1));
  EXPECT_FALSE(cache.link_snapshot_file(k_commit, "a", "../../x"));
  EXPECT_FALSE(cache.link_snapshot_file("main", "a", k_hello_sha1));
  EXPECT_FALSE(cache.mark_no_exist(k_commit, "a//b"));
  EXPECT_FALSE(fs::exists("escape"));
  EXPECT_TRUE(is_safe_repo_path("build/torch-cpu/a b.py"));
  EXPECT_FALSE(is_safe_repo_path("build/./x"));
  EXPECT_FALSE(is_safe_repo_path("a\\b"));
}

TEST(RepoCache, SnapshotLinksAreRelativeToTheBlob) {
  const RepoCache cache("hub", kernel_ref());
  fs::create_directories(cache.blob_path(k_hello_sha1).parent_path());
  ASSERT_TRUE(util::write_file_atomic(cache.blob_path(k_hello_sha1), "hello\n"));
  ASSERT_TRUE(cache.link_snapshot_file(k_commit, "config.json", k_hello_sha1));
  ASSERT_TRUE(cache.link_snapshot_file(k_commit, "build/torch-cpu/x.py", k_hello_sha1));
  EXPECT_EQ(fs::read_symlink(cache.snapshot_file(k_commit, "config.json")),
            fs::path("../../blobs").concat("/").concat(k_hello_sha1));
  EXPECT_EQ(fs::read_symlink(cache.snapshot_file(k_commit, "build/torch-cpu/x.py")),
            fs::path("../../../../blobs").concat("/").concat(k_hello_sha1));
  EXPECT_EQ(*util::read_file(cache.snapshot_file(k_commit, "build/torch-cpu/x.py")), "hello\n");
  // Relinking replaces the link in place.
  ASSERT_TRUE(cache.link_snapshot_file(k_commit, "config.json", k_hello_sha1));
  EXPECT_TRUE(cache.has_blob(k_hello_sha1));
}

TEST(RepoCache, NoExistMarkersAndCacheDirTag) {
  const RepoCache cache("hub", kernel_ref());
  ASSERT_TRUE(cache.mark_no_exist(k_commit, "kernel-status.toml"));
  EXPECT_TRUE(fs::is_regular_file(cache.no_exist_file(k_commit, "kernel-status.toml")));
  EXPECT_EQ(fs::file_size(cache.no_exist_file(k_commit, "kernel-status.toml")), 0u);
  cache.tag_cache_root();
  EXPECT_EQ(*util::read_file("hub/CACHEDIR.TAG"), k_cachedir_tag);
}

}  // namespace
}  // namespace kernelhub::cache
