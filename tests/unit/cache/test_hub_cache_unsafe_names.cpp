// SPDX-License-Identifier: Apache-2.0
// One unsafe name in a repository (issue 12, item 10): only a download that wants that file
// fails, naming it; every other download of the version works, and the name is never stored.
#include <filesystem>

#include <gtest/gtest.h>

#include "cache_test_support.hpp"
#include "fake_hub.hpp"
#include <kernelhub/cache/hub_cache.hpp>
#include <kernelhub/cache/kernel_download.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::cache {
namespace {

namespace fs = std::filesystem;
using testing::FakeHub;
using testing::fake_client;
using testing::kernel_ref;

std::shared_ptr<FakeHub> hub_with_odd_names() {
  auto hub = std::make_shared<FakeHub>();
  hub->files = {{"README.md", "# relu\n"},
                {"notes\\readme.txt", "not a kernel file\n"},
                {"build/torch-cpu/relu/__init__.py", "x = 1\n"},
                {"build/torch-cuda/relu/__init__.py", "x = 2\n"},
                {"build/torch-cuda/relu/..\\..\\evil.py", "boom\n"}};
  return hub;
}

TEST(HubCacheUnsafeNames, AnUnsafeNameOutsideTheWantedFilesIsSkipped) {
  fs::remove_all("hub-odd-1");
  auto hub = hub_with_odd_names();
  const auto client = fake_client(hub);
  const HubCache cache("hub-odd-1", client);
  const PatternFilter cpu(std::vector<std::string>{"build/torch-cpu/*"}, {});
  const auto result = cache.snapshot_download(kernel_ref(), "main", cpu);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->files, 1u);
  EXPECT_EQ(*util::read_file(result->path / "build/torch-cpu/relu/__init__.py"), "x = 1\n");
  // The listing still names every file of the commit, the odd ones included.
  const auto listing = cache.listing(kernel_ref(), hub->commit);
  ASSERT_TRUE(listing) << listing.error().message;
  EXPECT_TRUE(listing->contains("notes\\readme.txt"));
  EXPECT_EQ(hub->count("GET", "readme"), 0u);
}

TEST(HubCacheUnsafeNames, AWantedUnsafeFileIsRefusedByName) {
  fs::remove_all("hub-odd-2");
  auto hub = hub_with_odd_names();
  const auto client = fake_client(hub);
  const HubCache cache("hub-odd-2", client);
  const PatternFilter cuda(std::vector<std::string>{"build/torch-cuda/*"}, {});
  const auto result = cache.snapshot_download(kernel_ref(), "main", cuda);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("build/torch-cuda/relu/..\\..\\evil.py"), std::string::npos)
      << result.error().message;
  EXPECT_EQ(hub->count("GET", "evil"), 0u);
  EXPECT_FALSE(fs::exists("hub-odd-2/evil.py"));
}

TEST(HubCacheUnsafeNames, VariantNamesIgnoreUnsafePaths) {
  TreeListing listing;
  listing["build/torch-cpu/relu/__init__.py"] = TreeFile{};
  listing["build/../x/y"] = TreeFile{};
  listing["build/a\\b/c"] = TreeFile{};
  EXPECT_EQ(variant_names(listing), std::vector<std::string>{"torch-cpu"});
}

}  // namespace
}  // namespace kernelhub::cache
