// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <kernelhub/metadata/built_variants.hpp>

#include "../test_support.hpp"

namespace kernelhub::metadata {
namespace {

namespace fs = std::filesystem;
using Names = std::vector<std::string>;

using kernelhub::testing::write;

TEST(BuiltVariants, ListsFoldersWithMetadataOnly) {
  write("k/build/torch215-cxx11-cpu-x86_64-linux/metadata.json", "{}");
  write("k/build/torch-cpu/metadata.json", "{}");
  fs::create_directories("k/build/half-built");
  write("k/build/.kernelhub/torch-cuda/metadata.json", "{}");
  write("k/build/.torch-cuda.failed/metadata.json", "{}");
  write("k/build/README.md", "not a variant");
  EXPECT_EQ(built_variant_names("k"), (Names{"torch-cpu", "torch215-cxx11-cpu-x86_64-linux"}));
}

TEST(BuiltVariants, NoBuildFolderIsEmpty) {
  EXPECT_TRUE(built_variant_names("missing").empty());
  write("k/build", "a file, not a folder");
  EXPECT_TRUE(built_variant_names("k").empty());
}

}  // namespace
}  // namespace kernelhub::metadata
