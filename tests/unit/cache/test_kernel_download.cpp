// SPDX-License-Identifier: Apache-2.0
#include <filesystem>

#include <gtest/gtest.h>

#include "cache_test_support.hpp"
#include "fake_hub.hpp"
#include <kernelhub/cache/kernel_download.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::cache {
namespace {

namespace fs = std::filesystem;
using testing::FakeHub;
using testing::fake_client;
using testing::kernel_ref;

std::shared_ptr<FakeHub> kernel_hub() {
  auto hub = std::make_shared<FakeHub>();
  hub->files = {{"README.md", "# relu\n"},
                {"build/torch-cpu/relu/__init__.py", "noarch cpu\n"},
                {"build/torch29-cxx11-cpu-x86_64-linux/relu/__init__.py", "arch cpu\n"},
                {"build/torch29-cxx11-cu128-x86_64-linux/relu/__init__.py", "cuda\n"}};
  hub->branches = {{"main", hub->commit}, {"v1", hub->commit}, {"v10", hub->commit},
                   {"vx", hub->commit}};
  return hub;
}

variants::SystemInfo cpu_machine() {
  variants::SystemInfo system;
  system.torch_version = variants::ReleaseVersion::from_parts("2", "9");
  system.cxx11_abi = true;
  return system;
}

TEST(KernelDownload, VersionBranchNames) {
  EXPECT_EQ(parse_version_branch("v1"), std::optional<unsigned>(1));
  EXPECT_EQ(parse_version_branch("v10"), std::optional<unsigned>(10));
  EXPECT_FALSE(parse_version_branch("v").has_value());
  EXPECT_FALSE(parse_version_branch("v1.0").has_value());
  EXPECT_FALSE(parse_version_branch("main").has_value());
}

TEST(KernelDownload, ListsVersionBranchesSortedByNumber) {
  auto hub = kernel_hub();
  const auto client = fake_client(hub);
  const HubCache cache("hub", client);
  const auto versions = kernel_versions(cache, *hub::RepoId::parse("org/relu"));
  ASSERT_TRUE(versions);
  ASSERT_EQ(versions->size(), 2u);
  EXPECT_EQ((*versions)[0].number, 1u);
  EXPECT_EQ((*versions)[1].number, 10u);
  const auto missing = resolve_kernel_version(cache, *hub::RepoId::parse("org/relu"), 3);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "Version 3 not found, available versions: 1, 10");
}

TEST(KernelDownload, DownloadsOnlyThePreferredVariantAndWritesTheVersionRef) {
  auto hub = kernel_hub();
  const auto client = fake_client(hub);
  const HubCache cache("hub", client);
  KernelDownloadRequest request;
  request.version = 1;
  request.system = cpu_machine();
  const auto result = download_kernel(cache, *hub::RepoId::parse("org/relu"), request);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_TRUE(result->chosen.has_value());
  EXPECT_EQ(*result->chosen, "torch29-cxx11-cpu-x86_64-linux");
  EXPECT_EQ(*util::read_file(result->path / "relu/__init__.py"), "arch cpu\n");
  EXPECT_EQ(result->snapshot.files, 1u);
  EXPECT_EQ(result->variants.size(), 3u);
  // kernels resolves version 1 offline from refs/v1.
  EXPECT_EQ(cache.repo(kernel_ref()).read_ref("v1"), std::optional<std::string>(hub->commit));

  // Offline, the same request is answered from the cache alone.
  const auto before = hub->requests().size();
  const auto offline_client = fake_client(hub, /*offline=*/true);
  const HubCache offline("hub", offline_client);
  const auto again = download_kernel(offline, *hub::RepoId::parse("org/relu"), request);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->path, result->path);
  EXPECT_EQ(hub->requests().size(), before);
}

TEST(KernelDownload, AllVariantsAndNoFittingVariant) {
  auto hub = kernel_hub();
  const auto client = fake_client(hub);
  const HubCache cache("hub", client);
  KernelDownloadRequest request;
  request.revision = "main";
  request.all_variants = true;
  request.system = cpu_machine();
  const auto all = download_kernel(cache, *hub::RepoId::parse("org/relu"), request);
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(all->snapshot.files, 3u);
  EXPECT_EQ(all->path, cache.repo(kernel_ref()).snapshot_dir(hub->commit));

  request.all_variants = false;
  request.system->os = "darwin";
  request.system->backend = variants::SystemBackend{types::Backend::metal, {}};
  const auto none = download_kernel(cache, *hub::RepoId::parse("org/relu"), request);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message.rfind(
                "Cannot find a build variant for this system in org/relu (revision: main):\n\n", 0),
            0u);
}

TEST(KernelDownload, OfflineWithoutCachedVersionsGivesTheReferenceError) {
  auto hub = kernel_hub();
  const auto client = fake_client(hub, /*offline=*/true);
  const HubCache cache("hub", client);
  const auto missing = resolve_kernel_version(cache, *hub::RepoId::parse("org/relu"), 1);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message.rfind(
                "Version 1 of 'org/relu' is not available in the local cache and Hugging Face "
                "Hub is in offline mode.",
                0),
            0u);
  EXPECT_TRUE(hub->requests().empty());
}

}  // namespace
}  // namespace kernelhub::cache
