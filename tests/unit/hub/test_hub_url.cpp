// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/hub_url.hpp>

#include <gtest/gtest.h>

namespace kernelhub::hub {
namespace {

RepoRef repo(std::string_view id, RepoType type) { return RepoRef{*RepoId::parse(id), type}; }

TEST(HubUrl, QuoteKeepsSlashesOnlyWhenSafe) {
  EXPECT_EQ(url_quote("a b.txt"), "a%20b.txt");
  EXPECT_EQ(url_quote("dir/x+y~z_-.bin"), "dir/x%2By~z_-.bin");
  EXPECT_EQ(url_quote("feature/x", ""), "feature%2Fx");
  EXPECT_EQ(url_quote("refs/pr/1", ""), "refs%2Fpr%2F1");
  EXPECT_EQ(url_quote("\xc3\xa9"), "%C3%A9");
}

TEST(HubUrl, ResolveUrlPerRepoType) {
  EXPECT_EQ(resolve_url("http://h:1/hf", repo("org/m", RepoType::model), "feature/x", "a b/c.json"),
            "http://h:1/hf/org/m/resolve/feature%2Fx/a%20b/c.json");
  EXPECT_EQ(resolve_url("https://huggingface.co", repo("org/k", RepoType::kernel), "v1",
                        "build/torch-cpu/metadata.json"),
            "https://huggingface.co/kernels/org/k/resolve/v1/build/torch-cpu/metadata.json");
  EXPECT_EQ(api_repo_url("https://e", repo("o/d", RepoType::dataset)), "https://e/api/datasets/o/d");
}

TEST(HubUrl, TreeUrlQuotesThePathWithItsSlashes) {
  EXPECT_EQ(tree_url("http://e", repo("o/k", RepoType::kernel), "main", "build/sub", Recursive::no),
            "http://e/api/kernels/o/k/tree/main/build%2Fsub?recursive=false&expand=false");
  EXPECT_EQ(tree_url("http://e", repo("o/k", RepoType::kernel), "dev/1", "", Recursive::yes),
            "http://e/api/kernels/o/k/tree/dev%2F1?recursive=true&expand=false");
}

TEST(HubUrl, LinkNextFindsTheNextRelation) {
  EXPECT_EQ(link_next(R"(<http://e/api/t?cursor=4>; rel="next")"), "http://e/api/t?cursor=4");
  EXPECT_EQ(link_next(R"(<http://e/p1>; rel="prev", <http://e/p3>; rel="next")"), "http://e/p3");
  EXPECT_EQ(link_next(R"(<http://e/p1>; rel="prev")"), std::nullopt);
  EXPECT_EQ(link_next(""), std::nullopt);
}

TEST(HubUrl, OriginMakesDefaultPortsExplicit) {
  EXPECT_EQ(url_origin("https://HuggingFace.co/x"), "https://huggingface.co:443");
  EXPECT_EQ(url_origin("http://127.0.0.1:8080/a?b"), "http://127.0.0.1:8080");
  EXPECT_EQ(url_origin("http://[::1]:81/"), "http://[::1]:81");
  EXPECT_EQ(url_origin("/relative/path"), std::nullopt);
  EXPECT_NE(url_origin("http://localhost:80/"), url_origin("http://127.0.0.1/"));
}

TEST(HubUrl, ResolveLocationAgainstTheBase) {
  EXPECT_EQ(resolve_location("http://h:1/a/b?q=1", "https://cdn/x"), "https://cdn/x");
  EXPECT_EQ(resolve_location("http://h:1/a/b?q=1", "/new/path"), "http://h:1/new/path");
  EXPECT_EQ(resolve_location("http://h:1/a/b?q=1", "c"), "http://h:1/a/c");
  EXPECT_EQ(resolve_location("https://h/a", "//cdn/x"), "https://cdn/x");
}

TEST(HubUrl, NormalizeEtagDropsWeakPrefixAndQuotes) {
  EXPECT_EQ(normalize_etag("W/\"abc\""), "abc");
  EXPECT_EQ(normalize_etag("\"abc\""), "abc");
  EXPECT_EQ(normalize_etag("abc"), "abc");
}

}  // namespace
}  // namespace kernelhub::hub
