// SPDX-License-Identifier: Apache-2.0
#include <filesystem>

#include <gtest/gtest.h>

#include "cache_test_support.hpp"
#include "fake_hub.hpp"
#include <kernelhub/cache/hub_cache.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::cache {
namespace {

namespace fs = std::filesystem;
using testing::FakeHub;
using testing::fake_client;
using testing::kernel_ref;

std::shared_ptr<FakeHub> sample_hub() {
  auto hub = std::make_shared<FakeHub>();
  hub->files = {{"README.md", "# relu\n"},
                {"build/torch-cpu/relu/__init__.py", "x = 1\n"},
                {"build/torch-cpu/relu/_ops.py", "y = 2\n"},
                {"build/torch-cpu/relu/empty.txt", ""},
                {"build/torch-cuda/relu/__init__.py", "x = 1\n"}};
  return hub;
}

const PatternFilter k_cpu_only(std::vector<std::string>{"build/torch-cpu/*"}, {});

TEST(HubCache, SnapshotDownloadFillsTheCacheAsHuggingfaceHubDoes) {
  auto hub = sample_hub();
  const auto client = fake_client(hub);
  const HubCache cache("hub", client);
  const auto result = cache.snapshot_download(kernel_ref(), "main", k_cpu_only);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->commit, hub->commit);
  EXPECT_EQ(result->files, 3u);
  // Three blobs stored: "x = 1", "y = 2" and the empty one, which needs no GET.
  EXPECT_EQ(result->downloaded, 3u);
  const auto repo = cache.repo(kernel_ref());
  EXPECT_EQ(*util::read_file(repo.ref_path("main")), hub->commit);
  EXPECT_EQ(*util::read_file(result->path / "build/torch-cpu/relu/_ops.py"), "y = 2\n");
  EXPECT_EQ(fs::file_size(result->path / "build/torch-cpu/relu/empty.txt"), 0u);
  EXPECT_TRUE(fs::is_symlink(result->path / "build/torch-cpu/relu/_ops.py"));
  EXPECT_FALSE(fs::exists(result->path / "README.md"));
  // The tree file lists the whole commit, not just what was kept.
  const auto tree = read_tree_cache(repo.tree_file(hub->commit));
  ASSERT_TRUE(tree.has_value());
  EXPECT_EQ(tree->size(), hub->files.size());
  EXPECT_TRUE(fs::exists("hub/CACHEDIR.TAG"));
  // No HEAD per file: names and sizes come from the tree.
  EXPECT_EQ(hub->count("HEAD", "/resolve/"), 0u);
  EXPECT_EQ(hub->count("GET", "/resolve/"), 2u);
}

TEST(HubCache, ASecondSnapshotTransfersNothing) {
  auto hub = sample_hub();
  const auto client = fake_client(hub);
  const HubCache cache("hub", client);
  ASSERT_TRUE(cache.snapshot_download(kernel_ref(), "main", k_cpu_only));
  const auto before = hub->requests().size();
  const auto again = cache.snapshot_download(kernel_ref(), "main", k_cpu_only);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->downloaded, 0u);
  // Only the branch is asked for again; by commit, nothing at all.
  EXPECT_EQ(hub->requests().size(), before + 1);
  ASSERT_TRUE(cache.snapshot_download(kernel_ref(), hub->commit, k_cpu_only));
  EXPECT_EQ(hub->requests().size(), before + 1);
}

TEST(HubCache, OfflineReadsTheCacheWithoutAnyRequest) {
  auto hub = sample_hub();
  {
    const auto client = fake_client(hub);
    ASSERT_TRUE(HubCache("hub", client).snapshot_download(kernel_ref(), "main", k_cpu_only));
  }
  const auto before = hub->requests().size();
  const auto offline_client = fake_client(hub, /*offline=*/true);
  const HubCache cache("hub", offline_client);
  const auto result = cache.snapshot_download(kernel_ref(), "main", k_cpu_only);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->commit, hub->commit);
  const auto file = cache.file_download(kernel_ref(), "main", "build/torch-cpu/relu/_ops.py");
  ASSERT_TRUE(file) << file.error().message;
  // The CUDA variant was never fetched: the tree file says it is missing.
  const auto incomplete =
      cache.snapshot_download(kernel_ref(), "main", PatternFilter(std::vector<std::string>{"build/*"}, {}));
  ASSERT_FALSE(incomplete);
  EXPECT_NE(incomplete.error().message.find("lacks 1 wanted file"), std::string::npos);
  EXPECT_EQ(hub->requests().size(), before);
}

TEST(HubCache, ACommitsTreeFileIsReadOncePerCacheObject) {
  auto hub = sample_hub();
  {
    const auto client = fake_client(hub);
    ASSERT_TRUE(HubCache("hub", client).snapshot_download(kernel_ref(), "main", k_cpu_only));
  }
  const auto offline_client = fake_client(hub, /*offline=*/true);
  const HubCache cache("hub", offline_client);
  ASSERT_TRUE(cache.listing(kernel_ref(), hub->commit));
  // A load reads the listing to choose its variant, then again to fetch it: the second read
  // is the first one's. Emptying the file shows which one answered.
  const auto tree = cache.repo(kernel_ref()).tree_file(hub->commit);
  ASSERT_TRUE(util::write_file_atomic(tree, "{}"));
  const auto again = cache.listing(kernel_ref(), hub->commit);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->size(), hub->files.size());
  EXPECT_TRUE(cache.snapshot_download(kernel_ref(), hub->commit, k_cpu_only));
  // Another cache object reads the file as it is now.
  const HubCache fresh("hub", offline_client);
  EXPECT_FALSE(fresh.listing(kernel_ref(), hub->commit));
}

TEST(HubCache, OfflineMissNamesTheRepoAndRevision) {
  auto hub = sample_hub();
  const auto client = fake_client(hub, /*offline=*/true);
  const HubCache cache("hub", client);
  const auto result = cache.snapshot_download(kernel_ref(), "v1", k_cpu_only);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("revision \"v1\" of kernel repository \"org/relu\""),
            std::string::npos);
  EXPECT_NE(result.error().message.find("HF_HUB_OFFLINE"), std::string::npos);
  EXPECT_FALSE(cache.file_download(kernel_ref(), "main", "README.md"));
  EXPECT_TRUE(hub->requests().empty());
}

TEST(HubCache, AnUnreachableServerFallsBackToTheCache) {
  auto hub = sample_hub();
  const auto client = fake_client(hub);
  const HubCache cache("hub", client);
  ASSERT_TRUE(cache.snapshot_download(kernel_ref(), "main", k_cpu_only));
  hub->unreachable = true;
  const auto result = cache.snapshot_download(kernel_ref(), "main", k_cpu_only);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->commit, hub->commit);
  const auto missing = cache.snapshot_download(kernel_ref(), "other", k_cpu_only);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("connection refused"), std::string::npos);
}

TEST(HubCache, FileDownloadUsesHeadThenGetAndRecordsMissingFiles) {
  auto hub = sample_hub();
  const auto client = fake_client(hub);
  const HubCache cache("hub", client);
  const auto file = cache.file_download(kernel_ref(), "main", "README.md");
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(*util::read_file(*file), "# relu\n");
  EXPECT_EQ(hub->count("HEAD", "/resolve/main/README.md"), 1u);
  EXPECT_EQ(hub->count("GET", "/resolve/"), 1u);
  // By commit, a cached file needs no request.
  const auto before = hub->requests().size();
  ASSERT_TRUE(cache.file_download(kernel_ref(), hub->commit, "README.md"));
  EXPECT_EQ(hub->requests().size(), before);

  const auto missing = cache.file_download(kernel_ref(), "main", "kernel-status.toml");
  ASSERT_FALSE(missing);
  EXPECT_TRUE(fs::exists(cache.repo(kernel_ref()).no_exist_file(hub->commit, "kernel-status.toml")));
}

TEST(HubCache, AFileMissingAtACommitIsNotAskedForAgain) {
  // A commit never changes, so what the Hub said is not in it (huggingface_hub's
  // .no_exist/<commit>/<path> marker) needs no second request: each warm get_kernel used to
  // send a HEAD for kernel-status.toml, which commits without a redirect do not have.
  auto hub = sample_hub();
  const auto client = fake_client(hub);
  const HubCache cache("hub", client);
  ASSERT_FALSE(cache.file_download(kernel_ref(), "main", "kernel-status.toml"));
  const auto before = hub->requests().size();
  const auto again = cache.file_download(kernel_ref(), hub->commit, "kernel-status.toml");
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("not found"), std::string::npos) << again.error().message;
  EXPECT_EQ(hub->requests().size(), before);
  // By branch the answer may change, so it is asked for again.
  ASSERT_FALSE(cache.file_download(kernel_ref(), "main", "kernel-status.toml"));
  EXPECT_EQ(hub->requests().size(), before + 1);
}

TEST(HubCache, ResumesAPartialBlobWithARange) {
  auto hub = sample_hub();
  hub->files = {{"big.bin", std::string(1000, 'z')}};
  const auto client = fake_client(hub);
  const HubCache cache("hub", client);
  const auto repo = cache.repo(kernel_ref());
  const auto etag = hub::git_blob_sha1(hub->files["big.bin"]);
  fs::create_directories(repo.folder() / "blobs");
  ASSERT_TRUE(util::write_file_atomic(repo.partial_blob_path(etag), std::string(400, 'z')));
  const auto result = cache.snapshot_download(kernel_ref(), "main", PatternFilter());
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(fs::file_size(result->path / "big.bin"), 1000u);
  EXPECT_FALSE(fs::exists(repo.partial_blob_path(etag)));
  EXPECT_EQ(hub->count("GET", "/resolve/"), 1u);
  EXPECT_EQ(hub->ranges, std::vector<std::string>{"bytes=400-"});
}


// An LFS file as huggingface.co serves it: the blob is named by the sha256 (the tree's
// `lfs.oid`, X-Linked-Etag), as huggingface_hub names it, so either client finds the other's
// blob; the bytes come from the CDN the resolve URL redirects to, without the token.
TEST(HubCache, LfsFilesAreBlobsNamedBySha256FetchedFromTheCdnWithoutTheToken) {
  auto hub = std::make_shared<FakeHub>();
  const std::string library(300000, '\x7f');
  hub->files = {{"build/torch-cpu/relu/_relu.so", library}, {"build/torch-cpu/relu/__init__.py", "x = 1\n"}};
  hub->lfs = {"build/torch-cpu/relu/_relu.so"};
  hub::Endpoint endpoint;
  endpoint.url = FakeHub::k_base;
  endpoint.token = "hf_secret";
  hub::ClientOptions options;
  options.progress_bar = false;
  options.sleep = [](std::chrono::milliseconds) {};
  const hub::HubClient client(endpoint, options, hub);
  const HubCache cache("hub", client);
  const auto result = cache.snapshot_download(kernel_ref(), "main", PatternFilter());
  ASSERT_TRUE(result) << result.error().message;
  const auto repo = cache.repo(kernel_ref());
  const auto sha256 = hub::sha256_hex(library);
  EXPECT_TRUE(fs::is_regular_file(repo.blob_path(sha256)));
  EXPECT_EQ(fs::read_symlink(result->path / "build/torch-cpu/relu/_relu.so").filename(), sha256);
  EXPECT_EQ(*util::read_file(result->path / "build/torch-cpu/relu/_relu.so"), library);
  EXPECT_EQ(hub->cdn_authorization, std::vector<std::string>{""});
  const auto tree = read_tree_cache(repo.tree_file(hub->commit));
  ASSERT_TRUE(tree.has_value());
  EXPECT_EQ(tree->at("build/torch-cpu/relu/_relu.so").blob_name(), sha256);

  // hf_hub_download's path (HEAD, then GET of the Location) names the same blob.
  const HubCache other("hub2", client);
  const auto file = other.file_download(kernel_ref(), "main", "build/torch-cpu/relu/_relu.so");
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_TRUE(fs::is_regular_file(other.repo(kernel_ref()).blob_path(sha256)));
  EXPECT_EQ(hub->cdn_authorization, (std::vector<std::string>{"", ""}));
}

TEST(HubCache, APartialLfsBlobResumesFromTheCdn) {
  auto hub = std::make_shared<FakeHub>();
  const std::string library(5000, 'L');
  hub->files = {{"w.so", library}};
  hub->lfs = {"w.so"};
  const auto client = fake_client(hub);
  const HubCache cache("hub", client);
  const auto repo = cache.repo(kernel_ref());
  const auto sha256 = hub::sha256_hex(library);
  fs::create_directories(repo.folder() / "blobs");
  ASSERT_TRUE(util::write_file_atomic(repo.partial_blob_path(sha256), std::string(1200, 'L')));
  const auto result = cache.snapshot_download(kernel_ref(), "main", PatternFilter());
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(*util::read_file(result->path / "w.so"), library);
  EXPECT_FALSE(fs::exists(repo.partial_blob_path(sha256)));
  // The resolve URL and then the CDN each got the Range.
  EXPECT_EQ(hub->ranges, (std::vector<std::string>{"bytes=1200-"}));
  EXPECT_EQ(hub->count("GET", "/blobs/" + sha256), 1u);
}

TEST(HubCache, AnLfsBlobWhoseBytesDoNotHashToItsNameIsNotStored) {
  auto hub = std::make_shared<FakeHub>();
  hub->files = {{"w.so", std::string(100, 'a')}};
  hub->lfs = {"w.so"};
  const auto client = fake_client(hub);
  const HubCache cache("hub", client);
  const auto repo = cache.repo(kernel_ref());
  const auto sha256 = hub::sha256_hex(hub->files["w.so"]);
  // A partial file of wrong bytes: the resumed download ends with the right size but the
  // wrong content, which must not be renamed into the blob.
  fs::create_directories(repo.folder() / "blobs");
  ASSERT_TRUE(util::write_file_atomic(repo.partial_blob_path(sha256), std::string(40, 'b')));
  const auto result = cache.snapshot_download(kernel_ref(), "main", PatternFilter());
  ASSERT_FALSE(result);
  EXPECT_FALSE(fs::exists(repo.blob_path(sha256)));
  EXPECT_FALSE(fs::exists(repo.partial_blob_path(sha256)));
}

}  // namespace
}  // namespace kernelhub::cache
