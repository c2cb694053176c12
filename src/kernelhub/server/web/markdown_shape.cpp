// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/markdown_shape.hpp>

#include <algorithm>
#include <limits>

namespace kernelhub::server::web {

namespace {

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > std::numeric_limits<std::uint64_t>::max() - b
             ? std::numeric_limits<std::uint64_t>::max()
             : a + b;
}

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  return b != 0 && a > std::numeric_limits<std::uint64_t>::max() / b
             ? std::numeric_limits<std::uint64_t>::max()
             : a * b;
}

// cmark-gfm's blank line: spaces and tabs only (a line of `\v` is a paragraph).
bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t") == std::string_view::npos;
}

// Characters of indentation and of block quote and list markers (`>`, `-`, `*`, `+`, `1.`,
// `1)`): a line's run of them bounds how deep it can nest. A tab counts as the four columns it
// may stand for.
std::size_t nesting_prefix(std::string_view line) {
  std::size_t width = 0;
  for (const char c : line) {
    if (c == '\t') {
      width += 4;
    } else if (c == ' ' || c == '>' || c == '-' || c == '*' || c == '+' || c == '.' ||
               c == ')' || (c >= '0' && c <= '9')) {
      ++width;
    } else {
      break;
    }
  }
  return width;
}

// Columns of `line` if it may be a table's delimiter row: only `-`, `:`, `|` and blanks, after
// what may be container markers. 0 when it cannot be one. A leading and a trailing `|` start
// and end no cell.
std::size_t delimiter_columns(std::string_view line) {
  if (line.find('-') == std::string_view::npos) {
    return 0;
  }
  std::size_t pipes = 0;
  for (const char c : line) {
    if (c == '|') {
      ++pipes;
    } else if (std::string_view(" \t\v\f-:>*+.)0123456789").find(c) == std::string_view::npos) {
      return 0;
    }
  }
  const std::size_t first = line.find_first_not_of(" \t\v\f>");
  const std::size_t last = line.find_last_not_of(" \t\v\f");
  std::size_t cells = pipes + 1;
  if (line[first] == '|') {
    --cells;
  }
  if (last != first && line[last] == '|') {
    --cells;
  }
  return cells;
}

}  // namespace

MarkdownShape measure_markdown(std::string_view text) {
  MarkdownShape shape;
  std::size_t deepest = 0;
  // The current run of non-blank lines: its length and its widest delimiter row.
  std::uint64_t run_lines = 0;
  std::size_t run_columns = 0;
  const auto end_run = [&] {
    shape.table_cells = saturating_add(shape.table_cells, saturating_mul(run_columns, run_lines));
    run_lines = 0;
    run_columns = 0;
  };
  std::size_t start = 0;
  while (start < text.size()) {
    // Lines end as cmark-gfm ends them: at "\n", "\r" or "\r\n".
    const std::size_t newline = text.find_first_of("\r\n", start);
    const std::size_t end = newline == std::string_view::npos ? text.size() : newline;
    const std::string_view line = text.substr(start, end - start);
    start = end + (text.substr(end, 2) == "\r\n" ? 2 : 1);
    deepest = std::max(deepest, nesting_prefix(line));
    shape.nesting_work = saturating_add(shape.nesting_work, deepest);
    if (is_blank(line)) {
      end_run();
      continue;
    }
    ++run_lines;
    const std::size_t columns = delimiter_columns(line);
    run_columns = std::max(run_columns, columns);
    shape.widest_table = std::max(shape.widest_table, columns);
  }
  end_run();
  return shape;
}

}  // namespace kernelhub::server::web
