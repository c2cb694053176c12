// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/markdown_cache.hpp>

#include <gtest/gtest.h>

namespace kernelhub::server::web {

namespace {

std::shared_ptr<const RenderedMarkdown> rendering(std::size_t bytes) {
  return std::make_shared<const RenderedMarkdown>(RenderedMarkdown{std::string(bytes, 'x'), "", 0});
}

TEST(MarkdownCache, TheLeastRecentlyUsedGoFirstOnceOverCapacity) {
  MarkdownCache cache(8000);
  cache.insert("a", rendering(500));
  cache.insert("b", rendering(500));
  ASSERT_NE(cache.find("a"), nullptr);  // a is now the most recent
  for (int i = 0; i < 20; ++i) {
    cache.insert("filler" + std::to_string(i), rendering(500));
    cache.find("a");
  }
  EXPECT_NE(cache.find("a"), nullptr);
  EXPECT_EQ(cache.find("b"), nullptr);
  EXPECT_LE(cache.held_bytes(), 8000u);
}

TEST(MarkdownCache, AnEntryOverAnEighthOfTheCapacityIsNotKept) {
  MarkdownCache cache(8000);
  cache.insert("big", rendering(1200));
  EXPECT_EQ(cache.find("big"), nullptr);
  const auto refused = std::make_shared<const RenderedMarkdown>(
      RenderedMarkdown{"", "its tables may have 5 cells", 0});
  cache.insert("refused", refused);
  EXPECT_EQ(cache.find("refused"), refused);
  cache.insert("refused", rendering(10));  // replaced, not added twice
  EXPECT_EQ(cache.find("refused")->html.size(), 10u);
}

}  // namespace

}  // namespace kernelhub::server::web
