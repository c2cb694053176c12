// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/abi/library_discovery.hpp>

#include <fstream>

#include <gtest/gtest.h>

namespace kernelhub::abi {
namespace {

namespace fs = std::filesystem;

void touch(const fs::path& path) {
  if (path.has_parent_path()) {
    fs::create_directories(path.parent_path());
  }
  std::ofstream(path) << "x";
}

using Paths = std::vector<fs::path>;

TEST(LibraryDiscovery, PrefersResultThenBuildThenTheDirectory) {
  touch("k/build/torch-cpu/metadata.json");
  touch("k/build/torch-cpu/relu/_ops.so");
  touch("k/torch-cuda/metadata.json");
  EXPECT_EQ(*discover_variants("k"), Paths{"k/build/torch-cpu"});
  touch("k/result/b/metadata.json");
  touch("k/result/a/metadata.json");
  touch("k/result/no-metadata/x.so");
  EXPECT_EQ(*discover_variants("k"), (Paths{"k/result/a", "k/result/b"}));
}

TEST(LibraryDiscovery, DirectoryItselfAndNoVariants) {
  touch("variant/metadata.json");
  EXPECT_EQ(*discover_variants("variant"), Paths{"variant"});
  fs::create_directories("empty");
  auto none = discover_variants("empty");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message,
            "no build variants found in \"empty/result\", \"empty/build\" or \"empty\"");
}

TEST(LibraryDiscovery, FindsSharedLibrariesRecursively) {
  touch("v/metadata.json");
  touch("v/relu/_ops.so");
  touch("v/relu/sub/other.pyd");
  touch("v/relu/__init__.py");
  touch("v/relu/libx.so.1");
  EXPECT_EQ(find_libraries("v"), (Paths{"v/relu/_ops.so", "v/relu/sub/other.pyd"}));
}

TEST(LibraryDiscovery, ArgumentsMixDirectoriesAndFiles) {
  touch("k/build/torch-cpu/metadata.json");
  touch("k/build/torch-cpu/relu/_ops.so");
  touch("lone.so");
  EXPECT_EQ(*libraries_to_check({"k", "lone.so"}),
            (Paths{"k/build/torch-cpu/relu/_ops.so", "lone.so"}));
  auto missing = libraries_to_check({"nope"});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "\"nope\" does not exist");
}

}  // namespace
}  // namespace kernelhub::abi
