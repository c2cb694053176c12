// SPDX-License-Identifier: Apache-2.0
// The pre-parse bounds: never below what cmark-gfm can build from the text.
#include <kernelhub/server/web/markdown_shape.hpp>

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "../../test_support.hpp"

namespace kernelhub::server::web {

namespace {

using kernelhub::testing::repeat;

TEST(MarkdownShape, ATablesWidthIsItsDelimiterRowsCells) {
  EXPECT_EQ(measure_markdown("| a | b |\n|---|:-:|\n| 1 | 2 |\n").widest_table, 2u);
  EXPECT_EQ(measure_markdown("a | b\n--- | ---\n").widest_table, 2u);
  EXPECT_EQ(measure_markdown("> | a | b | c |\n> |---|---|---|\n").widest_table, 3u);
  // Issue 20's table: 2,000 columns, every `|x` row padded to all of them.
  const std::string wide =
      "|" + repeat("a|", 2000) + "\n|" + repeat("-|", 2000) + "\n" + repeat("|x\n", 2000);
  const MarkdownShape shape = measure_markdown(wide);
  EXPECT_EQ(shape.widest_table, 2000u);
  EXPECT_EQ(shape.table_cells, 2000u * 2002u);
  // Text with pipes but no delimiter row makes no table.
  EXPECT_EQ(measure_markdown("a | b | c\nx | y | z\n").table_cells, 0u);
}

TEST(MarkdownShape, ABlankLineEndsTheRowsATableCanHave) {
  const std::string text = "|a|b|\n|-|-|\n|1|2|\n\n" + repeat("text line\n", 1000);
  EXPECT_EQ(measure_markdown(text).table_cells, 2u * 3u);
  // A line of \v is no blank line for cmark-gfm (it is a paragraph), so the rows go on.
  EXPECT_EQ(measure_markdown("|a|b|\n|-|-|\n\v\nrow\n").table_cells, 2u * 4u);
}

TEST(MarkdownShape, CarriageReturnsEndLinesAsNewlinesDo) {
  const MarkdownShape lf = measure_markdown(repeat("> ", 100) + "a\n" + repeat("b\n", 100));
  const MarkdownShape cr = measure_markdown(repeat("> ", 100) + "a\r" + repeat("b\r", 100));
  const MarkdownShape crlf =
      measure_markdown(repeat("> ", 100) + "a\r\n" + repeat("b\r\n", 100));
  EXPECT_EQ(lf.nesting_work, 101u * 200u);
  EXPECT_EQ(cr.nesting_work, lf.nesting_work);
  EXPECT_EQ(crlf.nesting_work, lf.nesting_work);
}

TEST(MarkdownShape, NestingWorkIsTheDeepestPrefixSoFarOverTheLines) {
  EXPECT_EQ(measure_markdown("plain\ntext\n").nesting_work, 0u);
  // A tab stands for up to four columns of indentation.
  EXPECT_EQ(measure_markdown("\t- a\nb\n").nesting_work, 6u + 6u);
  const MarkdownShape deep = measure_markdown(repeat("- ", 20000) + "a\n" + repeat("b\n", 20000));
  EXPECT_EQ(deep.nesting_work, 40000u * 20001u);
}

TEST(MarkdownShape, EmptyAndHugeCountsDoNotOverflow) {
  EXPECT_EQ(measure_markdown("").table_cells, 0u);
  EXPECT_EQ(measure_markdown("").nesting_work, 0u);
  const MarkdownShape shape = measure_markdown("|" + repeat("-|", 100000) + "\n" + repeat("x\n", 100000));
  EXPECT_EQ(shape.table_cells, std::uint64_t{100000} * 100001u);
}

}  // namespace

}  // namespace kernelhub::server::web
