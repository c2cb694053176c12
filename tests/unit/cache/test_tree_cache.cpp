// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/cache/tree_cache.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::cache {
namespace {

TreeListing sample() {
  TreeListing listing;
  listing["z.bin"] = TreeFile{2048, "aaaa", std::string("bbbb"), 2048, std::nullopt};
  listing["a b/é.txt"] = TreeFile{9, "cccc", std::nullopt, std::nullopt, std::nullopt};
  return listing;
}

TEST(TreeCache, RendersAsPythonJsonDumpIndentOne) {
  // What huggingface_hub 2.4's write_tree_cache writes for the same entries: keys of "files"
  // sorted, each entry in to_json order, indent=1, non-ASCII escaped.
  const std::string expected =
      "{\n"
      " \"format_version\": 1,\n"
      " \"files\": {\n"
      "  \"a b/\\u00e9.txt\": {\n"
      "   \"size\": 9,\n"
      "   \"blob_id\": \"cccc\"\n"
      "  },\n"
      "  \"z.bin\": {\n"
      "   \"size\": 2048,\n"
      "   \"blob_id\": \"aaaa\",\n"
      "   \"lfs_sha256\": \"bbbb\",\n"
      "   \"lfs_size\": 2048\n"
      "  }\n"
      " }\n"
      "}";
  EXPECT_EQ(render_tree_cache(sample()), expected);
}

TEST(TreeCache, RoundTripsThroughAFile) {
  ASSERT_TRUE(write_tree_cache("trees/abc.json", sample()));
  const auto read = read_tree_cache("trees/abc.json");
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(*read, sample());
  EXPECT_EQ(read->at("z.bin").blob_name(), "bbbb");
  EXPECT_EQ(read->at("a b/é.txt").blob_name(), "cccc");
}

TEST(TreeCache, IgnoresMissingCorruptAndOtherFormats) {
  EXPECT_FALSE(read_tree_cache("missing.json").has_value());
  ASSERT_TRUE(util::write_file_atomic("corrupt.json", "{\"format_version\": 1, \"files\": {\"a\": {}}}"));
  EXPECT_FALSE(read_tree_cache("corrupt.json").has_value());
  ASSERT_TRUE(util::write_file_atomic("v2.json", "{\"format_version\": 2, \"files\": {}}"));
  EXPECT_FALSE(read_tree_cache("v2.json").has_value());
  ASSERT_TRUE(util::write_file_atomic("empty.json", "{\"format_version\": 1, \"files\": {}}"));
  ASSERT_TRUE(read_tree_cache("empty.json").has_value());
  EXPECT_TRUE(read_tree_cache("empty.json")->empty());
}

}  // namespace
}  // namespace kernelhub::cache
