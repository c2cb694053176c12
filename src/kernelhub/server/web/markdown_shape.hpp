// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

// Upper bounds on what a Markdown text can make cmark-gfm do, found in one linear pass over
// the text before it is parsed (issue 20 item 1). They let a page refuse, with a reason, the
// two shapes whose cost grows faster than the text: tables (every row is padded to the header's
// width, so `|x` lines under a 2,000-column header give 2,000 cells each, and parsing a row is
// quadratic in its cells) and deep nesting followed by many lines (cmark-gfm walks every open
// block quote and list item on every line, allocating nothing, so only this bound stops it).
// The bounds over-estimate; they never under-estimate.
namespace kernelhub::server::web {

struct MarkdownShape {
  // Most columns any table can have: a table's width is its delimiter row's cell count (the
  // row of `-`, `:` and `|`), at most its `|` count plus one.
  std::size_t widest_table = 0;
  // Cells all tables can make: per run of non-blank lines holding a delimiter row, its widest
  // such row times its lines (a table ends at a blank line at the latest).
  std::uint64_t table_cells = 0;
  // The sum over lines of the deepest nesting any line so far could have opened (a block quote
  // or list item takes at least one character of the line's indentation and markers).
  std::uint64_t nesting_work = 0;
};

MarkdownShape measure_markdown(std::string_view text);

}  // namespace kernelhub::server::web
