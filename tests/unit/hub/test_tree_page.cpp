// SPDX-License-Identifier: Apache-2.0
// One tree page read into entries with the listing's limits applied while parsing (issue 20
// item 5): the fields as the Hub's client reads them, a path over the limit refused at once, the
// listing's byte and entry budgets, and the wrong shapes.
#include <kernelhub/hub/tree_page.hpp>

#include <string>

#include <gtest/gtest.h>

namespace kernelhub::hub {
namespace {

constexpr std::string_view k_what = "file list of org/relu at \"main\"";

HubResult<void> read(std::string_view body, TreeEntries& listing, const TreeListingLimits& limits = {}) {
  return read_tree_page(body, k_what, limits, listing);
}

TEST(TreePage, ReadsTheFieldsTheHubSends) {
  TreeEntries listing;
  const auto read_ok = read(R"([
      {"type": "directory", "oid": "d1", "size": 0, "path": "build",
       "lastCommit": {"id": "x", "title": "t", "date": "2026"}},
      {"type": "file", "oid": "o2", "size": 9, "path": "build/w.bin",
       "lfs": {"oid": "s256", "size": 9, "pointerSize": 130, "extra": [1, {"a": 2}]},
       "securityFileStatus": {"status": "safe", "avScan": [{"x": null}]}},
      {"type": "file", "oid": "o3", "size": -1, "path": "a.txt", "lfs": null}
    ])",
                            listing);
  ASSERT_TRUE(read_ok) << read_ok.error().message;
  ASSERT_EQ(listing.entries.size(), 3u);
  EXPECT_EQ(listing.entries[0].kind, TreeEntry::Kind::directory);
  EXPECT_EQ(listing.entries[0].path, "build");
  EXPECT_EQ(listing.entries[1].kind, TreeEntry::Kind::file);
  EXPECT_EQ(listing.entries[1].size, 9u);
  ASSERT_TRUE(listing.entries[1].lfs);
  EXPECT_EQ(listing.entries[1].lfs->sha256, "s256");
  EXPECT_EQ(listing.entries[1].lfs->pointer_size, 130u);
  EXPECT_EQ(listing.entries[1].blob_id(), "s256");
  // A negative size reads as absent; an lfs that is not an object as none.
  EXPECT_EQ(listing.entries[2].size, 0u);
  EXPECT_FALSE(listing.entries[2].lfs);
  EXPECT_GT(listing.held_bytes, 3 * sizeof(TreeEntry));
}

TEST(TreePage, FieldsOfAnotherTypeReadAsEmpty) {
  TreeEntries listing;
  ASSERT_TRUE(read(R"([{"type": 1, "oid": null, "path": ["x"], "size": "9"},
                      {"oid": "o", "path": "p", "lfs": {"oid": 2}, "lfs": {"oid": "z"}}])",
                   listing));
  ASSERT_EQ(listing.entries.size(), 2u);
  EXPECT_EQ(listing.entries[0].kind, TreeEntry::Kind::directory);
  EXPECT_EQ(listing.entries[0].path, "");
  EXPECT_EQ(listing.entries[0].oid, "");
  EXPECT_EQ(listing.entries[0].size, 0u);
  // No type is no file (found by fuzz_tree_page); a repeated key counts as its last value.
  EXPECT_EQ(listing.entries[1].kind, TreeEntry::Kind::directory);
  ASSERT_TRUE(listing.entries[1].lfs);
  EXPECT_EQ(listing.entries[1].lfs->sha256, "z");
}

TEST(TreePage, WrongShapesAreInvalidResponses) {
  for (const std::string_view body : {R"({"path": "a", "oid": "b"})", R"("x")", R"([1])", R"([[]])",
                                      R"([{"path": "a"}])", R"([{"oid": "b"}])"}) {
    TreeEntries listing;
    const auto result = read(body, listing);
    ASSERT_FALSE(result) << body;
    EXPECT_EQ(result.error().kind, ErrorKind::invalid_response);
    EXPECT_EQ(result.error().message.rfind(std::string(k_what) + ": ", 0), 0u) << result.error().message;
    EXPECT_TRUE(listing.entries.empty());
  }
  TreeEntries listing;
  const auto broken = read(R"([{"path": "a", "oid": "b"},)", listing);
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message.find("not JSON"), std::string::npos) << broken.error().message;
  EXPECT_TRUE(listing.entries.empty());  // nothing of a refused page is kept
}

TEST(TreePage, APathOverTheLimitStopsTheParseAtIt) {
  TreeListingLimits limits;
  limits.max_path_bytes = 64;
  TreeEntries listing;
  ASSERT_TRUE(read(R"([{"path": "kept", "oid": "o"}])", listing, limits));
  // What follows the long path is not even JSON: the reader never gets there.
  const std::string page = R"([{"path": "ok", "oid": "o"}, {"oid": "o", "path": ")" +
                           std::string(65, 'p') + R"("}, this is not JSON)";
  const auto result = read(page, listing, limits);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message,
            std::string(k_what) + ": entry 3 has a path of 65 bytes, over the limit of 64 (no cache "
                                  "folder could hold it)");
  ASSERT_EQ(listing.entries.size(), 1u);  // the earlier page's entry; none of this page's
  EXPECT_EQ(listing.entries[0].path, "kept");
  EXPECT_TRUE(read(R"([{"path": ")" + std::string(64, 'p') + R"(", "oid": "o"}])", listing, limits));
}

TEST(TreePage, TheListingsBytesAndEntriesAreBudgeted) {
  TreeListingLimits limits;
  limits.max_bytes = 4 * (sizeof(TreeEntry) + 200);
  const std::string entry = R"({"path": ")" + std::string(150, 'p') + R"(", "oid": ")" +
                            std::string(40, 'a') + R"("})";
  TreeEntries listing;
  ASSERT_TRUE(read("[" + entry + "," + entry + "]", listing, limits));
  ASSERT_TRUE(read("[" + entry + "," + entry + "]", listing, limits));
  const auto over = read("[" + entry + "]", listing, limits);
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().message.find("the listing is over the limit of " +
                                      std::to_string(limits.max_bytes) + " bytes after 4 entries"),
            std::string::npos)
      << over.error().message;
  EXPECT_EQ(listing.entries.size(), 4u);

  TreeListingLimits few;
  few.max_entries = 2;
  TreeEntries counted;
  const auto many = read("[" + entry + "," + entry + "," + entry + "]", counted, few);
  ASSERT_FALSE(many);
  EXPECT_NE(many.error().message.find("the server listed more than 2 entries"), std::string::npos);
}

}  // namespace
}  // namespace kernelhub::hub
