// SPDX-License-Identifier: Apache-2.0
// Each test runs in its own temporary working directory (tests/unit/main.cpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <kernelhub/builder/build_manifest.hpp>

namespace kernelhub::builder {
namespace {

namespace fs = std::filesystem;

TEST(BuildManifest, RecordsRoundTripAndTagTheBuildersFolder) {
  const fs::path build_dir = fs::absolute("build");
  EXPECT_FALSE(is_marked_builder_folder(build_dir));
  BuiltFiles files;
  files.digest.files = {{"__init__.py", "aGFzaA=="}, {"sub/x.so", "b3RoZXI="}};
  files.metadata_json = "{\"version\": 1}\n";
  ASSERT_TRUE(write_built_files(build_dir, "torch-cpu", files).has_value());
  EXPECT_TRUE(is_marked_builder_folder(build_dir));
  const auto read = read_built_files(build_dir, "torch-cpu");
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->digest, files.digest);
  EXPECT_EQ(read->metadata_json, files.metadata_json);
  EXPECT_FALSE(read_built_files(build_dir, "torch-cuda").has_value());
}

TEST(BuildManifest, AForeignTagOrABrokenRecordProvesNothing) {
  const fs::path build_dir = fs::absolute("build");
  fs::create_directories(build_dir / ".kernelhub" / "torch-cpu");
  std::ofstream(build_dir / ".kernelhub" / "CACHEDIR.TAG") << "Signature: something else\n";
  EXPECT_FALSE(is_marked_builder_folder(build_dir));
  std::ofstream(build_dir / ".kernelhub" / "torch-cpu" / "built-files.json")
      << "{\"algorithm\": \"sha256\", \"files\": {\"a\": 1}, \"metadata.json\": \"\"}";
  EXPECT_FALSE(read_built_files(build_dir, "torch-cpu").has_value());
}

}  // namespace
}  // namespace kernelhub::builder
