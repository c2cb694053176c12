// SPDX-License-Identifier: Apache-2.0
// Cards are untrusted: what cmark-gfm's safe mode keeps and drops, the GFM extensions we
// turn on, and where relative links of a card are sent.
#include <kernelhub/server/web/markdown.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../../test_support.hpp"

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
      k_bases).html;
  EXPECT_TRUE(contains(html, "<h1>Title</h1>")) << html;
  EXPECT_FALSE(contains(html, "<script")) << html;
  EXPECT_FALSE(contains(html, "onerror")) << html;
  EXPECT_FALSE(contains(html, "<b>")) << html;
  EXPECT_FALSE(contains(html, "javascript:")) << html;
  EXPECT_FALSE(contains(html, "data:text/html")) << html;
}

TEST(Markdown, TablesAutolinksAndStrikethroughAreRendered) {
  const std::string html = render_markdown(
      "| a | b |\n|---|---|\n| 1 | 2 |\n\nhttps://example.org/x ~~gone~~\n", k_bases).html;
  EXPECT_TRUE(contains(html, "<table>")) << html;
  EXPECT_TRUE(contains(html, "<td>2</td>")) << html;
  EXPECT_TRUE(contains(html, "<a href=\"https://example.org/x\">")) << html;
  EXPECT_TRUE(contains(html, "<del>gone</del>")) << html;
}

TEST(Markdown, RelativeLinksGoToTheRevisionsFiles) {
  const std::string html = render_markdown(
      "[script](benchmarks/b.py) [here](./docs/a.md) ![plot](media/p.svg) [site](/x) "
      "[anchor](#usage) [web](https://h.example/y) [mail](mailto:a@b.c)\n",
      k_bases).html;
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
  EXPECT_FALSE(contains(render_markdown(card, k_bases).html, "library_name"));
  // No closing fence: not front matter, so nothing is hidden.
  EXPECT_EQ(strip_front_matter("---\nlicense: mit\n# K\n"), "---\nlicense: mit\n# K\n");
  EXPECT_EQ(front_matter_license("# K\nlicense: mit\n"), "");
}

TEST(Markdown, InvalidUtf8IsReplacedNotPassedThrough) {
  const std::string html = render_markdown("caf\xc3 \xff end\n", k_bases).html;
  EXPECT_FALSE(contains(html, "\xff")) << html;
  EXPECT_TRUE(contains(html, "end")) << html;
}

using kernelhub::testing::repeat;

struct Hostile {
  std::string name;
  std::string text;
};

// Every shape known to make cmark-gfm 0.29.0.gfm.6 grow its output, its memory or its time
// faster than its input, each near the 1 MiB that is rendered at most.
std::vector<Hostile> hostile_shapes() {
  std::string indented_lists;
  for (int depth = 0; depth < 1000; ++depth) {
    indented_lists += std::string(2 * depth, ' ') + "* a\n";
  }
  return {
      // Issue 20's: 14 KB, 2,000 columns, 2,000 rows padded to 2,000 cells each.
      {"wide table", "|" + repeat("a|", 2000) + "\n|" + repeat("-|", 2000) + "\n" +
                         repeat("|x\n", 2000)},
      {"long table", "|" + repeat("a|", 900) + "\n|" + repeat("-|", 900) + "\n" +
                         repeat("|x\n", 80000)},
      {"many tables", repeat("|" + repeat("a|", 100) + "\n|" + repeat("-|", 100) + "\n" +
                                 repeat("|x\n", 50) + "\n",
                             50)},
      {"one header row of 100,000 cells", repeat("a|", 100000) + "\n" + repeat("-|", 100000)},
      {"link reference copied into every use",
       "[x]: /" + std::string(50000, 'y') + "\n\n" + repeat("[x]", 20000)},
      {"link reference title copied into every use",
       "[x]: /y \"" + std::string(50000, 't') + "\"\n\n" + repeat("[x] ", 20000)},
      {"many link references", repeat("[r]: /u\n", 100000) + repeat("[r] ", 5000)},
      {"deep block quotes, then lazy lines", repeat("> ", 20000) + "a\n" + repeat("b\n", 20000)},
      {"deep lists, then lazy lines", repeat("- ", 20000) + "a\n" + repeat("b\n", 20000)},
      {"deep ordered lists, \\r line ends",
       repeat("1. ", 20000) + "a\r" + repeat("b\r", 20000)},
      {"lists nested by indentation", indented_lists},
      {"nested brackets", repeat("[", 50000) + "a" + repeat("]", 50000)},
      {"nested emphasis", repeat("*a **a ", 65000) + "b" + repeat(" a** a*", 65000)},
      {"emphasis closers without openers", repeat("a_ ", 300000)},
      {"mismatched emphasis", repeat("*a_ ", 250000)},
      {"strikethrough delimiters", repeat("~a", 300000)},
      {"image openers", repeat("![[]()", 170000)},
      {"unclosed links", repeat("[a](<b", 170000)},
      {"unclosed comments", "</" + repeat("<!--", 250000)},
      {"autolink candidates", repeat("a@b.", 250000)},
      {"backticks", repeat("e`", 500000)},
  };
}

// Each hostile shape is rendered or refused with a reason, within the output and memory
// bounds, whatever it is. Times are printed, not asserted.
TEST(Markdown, HostileShapesStayWithinTheBounds) {
  const MarkdownLimits limits;
  for (const Hostile& shape : hostile_shapes()) {
    ASSERT_LE(shape.text.size(), limits.max_input_bytes) << shape.name;
    const auto start = std::chrono::steady_clock::now();
    const RenderedMarkdown result = render_markdown(shape.text, k_bases, limits);
    const auto took = std::chrono::steady_clock::now() - start;
    std::printf("[ markdown ] %-45s %8zu B in, %9zu B out, %6zu KiB held, %5lld ms%s%s\n",
                shape.name.c_str(), shape.text.size(), result.html.size(),
                result.peak_bytes >> 10,
                static_cast<long long>(
                    std::chrono::duration_cast<std::chrono::milliseconds>(took).count()),
                result.refusal.empty() ? "" : ", refused: ", result.refusal.c_str());
    EXPECT_NE(result.html.empty(), result.refusal.empty()) << shape.name;
    EXPECT_LE(result.html.size(), limits.max_output_bytes) << shape.name;
    EXPECT_LE(result.peak_bytes, limits.budget.max_bytes) << shape.name;
  }
}

TEST(Markdown, TablesPastTheirBoundsAreRefusedBeforeParsing) {
  const auto shapes = hostile_shapes();
  const RenderedMarkdown wide = render_markdown(shapes[0].text, k_bases);
  EXPECT_EQ(wide.refusal, "a table in it may have 2000 columns, more than the 1000 rendered");
  EXPECT_EQ(wide.peak_bytes, 0u);  // cmark-gfm never saw it
  const RenderedMarkdown long_table = render_markdown(shapes[1].text, k_bases);
  EXPECT_TRUE(contains(long_table.refusal, "its tables may have")) << long_table.refusal;
  MarkdownLimits narrow;
  narrow.max_table_columns = 3;
  EXPECT_TRUE(render_markdown("|a|b|c|\n|-|-|-|\n|1|2|3|\n", k_bases, narrow).refusal.empty());
  EXPECT_FALSE(render_markdown("|a|b|c|d|\n|-|-|-|-|\n", k_bases, narrow).refusal.empty());
}

TEST(Markdown, OutputPastTheMemoryBudgetIsAbandonedAndFreed) {
  // 110 KB that cmark-gfm turns into 500 MB of HTML: stopped at the budget.
  const std::string text = "[x]: /" + std::string(50000, 'y') + "\n\n" + repeat("[x]", 20000);
  MarkdownLimits limits;
  limits.budget.max_bytes = std::size_t{8} << 20;
  const RenderedMarkdown result = render_markdown(text, k_bases, limits);
  EXPECT_EQ(result.refusal, "rendering it needs more than 8 MiB of memory");
  EXPECT_TRUE(result.html.empty());
  EXPECT_LE(result.peak_bytes, limits.budget.max_bytes);
  // The same text with fewer uses fits and renders.
  const RenderedMarkdown fits =
      render_markdown("[x]: /" + std::string(50000, 'y') + "\n\n" + repeat("[x]", 10), k_bases,
                      limits);
  EXPECT_TRUE(fits.refusal.empty()) << fits.refusal;
  EXPECT_TRUE(contains(fits.html, "<a href=\"/yyy")) << fits.html.substr(0, 100);
}

TEST(Markdown, QuadraticInputIsStoppedByTheCpuLimit) {
  // cmark-gfm 0.29.0.gfm.6 takes about 10 s on this (quadratic, fixed upstream in gfm.7);
  // the limit is 1/50 of that, so the outcome does not depend on the machine's speed.
  MarkdownLimits limits;
  limits.budget.max_cpu = std::chrono::milliseconds(200);
  const RenderedMarkdown result = render_markdown(repeat("![[]()", 60000), k_bases, limits);
  EXPECT_EQ(result.refusal, "rendering it takes more than 200 ms");
  // The thread renders normally afterwards: no signal or state is left behind.
  EXPECT_TRUE(contains(render_markdown("*ok*\n", k_bases, limits).html, "<em>ok</em>"));
}

TEST(Markdown, InputPastTheLimitIsRefusedAndPagesShowItAsText) {
  MarkdownLimits limits;
  limits.max_input_bytes = 10;
  EXPECT_EQ(render_markdown("# a longer title\n", k_bases, limits).refusal,
            "it is 17 B, more than the 10 B rendered");
  PageMarkdown texts;
  const std::string page =
      texts.html("|" + repeat("a|", 2000) + "\n|" + repeat("-|", 2000) + "\n<b>", k_bases);
  EXPECT_TRUE(contains(page, "Shown as text, not rendered: a table in it may have")) << page;
  EXPECT_TRUE(contains(page, "&lt;b&gt;")) << page;
  EXPECT_FALSE(contains(page, "<table>")) << page;
}

TEST(Markdown, APageOfManyTextsRendersAsMuchAsOneTextMay) {
  PageMarkdown texts;
  const std::string comment = "*comment* " + std::string(60000, 'x') + "\n";
  std::size_t rendered = 0;
  std::size_t as_text = 0;
  for (int i = 0; i < 40; ++i) {
    const std::string html = texts.html(comment, k_bases);
    rendered += contains(html, "<em>comment</em>") ? 1 : 0;
    as_text += contains(html, "this page has rendered as much Markdown as one page may") ? 1 : 0;
  }
  EXPECT_EQ(rendered, (std::size_t{1} << 20) / comment.size());
  EXPECT_EQ(rendered + as_text, 40u);
}

TEST(Markdown, PageRenderingsAreKeptPerTextAndLinkBases) {
  const std::string text = "[a](b.md) unique text " + std::to_string(::getpid()) + "\n";
  const auto first = page_markdown(text, k_bases);
  EXPECT_EQ(page_markdown(text, k_bases), first);  // the same object: not rendered again
  const LinkBases other{"/m/blob/main", "/m/resolve/main"};
  const auto elsewhere = page_markdown(text, other);
  EXPECT_NE(elsewhere, first);
  EXPECT_TRUE(contains(elsewhere->html, "href=\"/m/blob/main/b.md\"")) << elsewhere->html;
}

}  // namespace

}  // namespace kernelhub::server::web
