// SPDX-License-Identifier: Apache-2.0
// Cards are untrusted: what cmark-gfm's safe mode keeps and drops, the GFM extensions we
// turn on, and where relative links of a card are sent.
#include <kernelhub/server/web/markdown.hpp>

#include <gtest/gtest.h>

namespace kernelhub::server::web {

namespace {

const LinkBases k_bases{"/kernels/org/k/blob/v1", "/kernels/org/k/resolve/v1"};

bool contains(const std::string& html, std::string_view part) {
  return html.find(part) != std::string::npos;
}

TEST(Markdown, RawHtmlAndUnsafeUrlsAreLeftOut) {
  const std::string html = render_markdown(
      "# Title\n\n<script>alert(1)</script>\n\nText <img src=x onerror=alert(2)> and "
      "<b>bold</b>.\n\n[click](javascript:alert(3)) [data](data:text/html,x)\n",
      k_bases);
  EXPECT_TRUE(contains(html, "<h1>Title</h1>")) << html;
  EXPECT_FALSE(contains(html, "<script")) << html;
  EXPECT_FALSE(contains(html, "onerror")) << html;
  EXPECT_FALSE(contains(html, "<b>")) << html;
  EXPECT_FALSE(contains(html, "javascript:")) << html;
  EXPECT_FALSE(contains(html, "data:text/html")) << html;
}

TEST(Markdown, TablesAutolinksAndStrikethroughAreRendered) {
  const std::string html = render_markdown(
      "| a | b |\n|---|---|\n| 1 | 2 |\n\nhttps://example.org/x ~~gone~~\n", k_bases);
  EXPECT_TRUE(contains(html, "<table>")) << html;
  EXPECT_TRUE(contains(html, "<td>2</td>")) << html;
  EXPECT_TRUE(contains(html, "<a href=\"https://example.org/x\">")) << html;
  EXPECT_TRUE(contains(html, "<del>gone</del>")) << html;
}

TEST(Markdown, RelativeLinksGoToTheRevisionsFiles) {
  const std::string html = render_markdown(
      "[script](benchmarks/b.py) [here](./docs/a.md) ![plot](media/p.svg) [site](/x) "
      "[anchor](#usage) [web](https://h.example/y) [mail](mailto:a@b.c)\n",
      k_bases);
  EXPECT_TRUE(contains(html, "href=\"/kernels/org/k/blob/v1/benchmarks/b.py\"")) << html;
  EXPECT_TRUE(contains(html, "href=\"/kernels/org/k/blob/v1/docs/a.md\"")) << html;
  EXPECT_TRUE(contains(html, "src=\"/kernels/org/k/resolve/v1/media/p.svg\"")) << html;
  EXPECT_TRUE(contains(html, "href=\"/x\"")) << html;
  EXPECT_TRUE(contains(html, "href=\"#usage\"")) << html;
  EXPECT_TRUE(contains(html, "href=\"https://h.example/y\"")) << html;
  EXPECT_TRUE(contains(html, "href=\"mailto:a@b.c\"")) << html;
}

TEST(Markdown, FrontMatterIsNotShownAndItsLicenseIsRead) {
  const std::string card = "---\nlibrary_name: kernels\nlicense: \"apache-2.0\"\n---\n# K\n";
  EXPECT_EQ(strip_front_matter(card), "# K\n");
  EXPECT_EQ(front_matter_license(card), "apache-2.0");
  EXPECT_FALSE(contains(render_markdown(card, k_bases), "library_name"));
  // No closing fence: not front matter, so nothing is hidden.
  EXPECT_EQ(strip_front_matter("---\nlicense: mit\n# K\n"), "---\nlicense: mit\n# K\n");
  EXPECT_EQ(front_matter_license("# K\nlicense: mit\n"), "");
}

TEST(Markdown, InvalidUtf8IsReplacedNotPassedThrough) {
  const std::string html = render_markdown("caf\xc3 \xff end\n", k_bases);
  EXPECT_FALSE(contains(html, "\xff")) << html;
  EXPECT_TRUE(contains(html, "end")) << html;
}

}  // namespace

}  // namespace kernelhub::server::web
