// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/util/toml_depth.hpp>

#include <vector>

#include <fmt/format.h>

namespace kernelhub::util {

namespace {

bool is_key_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  // Bytes >= 0x80 count as key characters: over-counting a key's parts only makes the scan
  // stricter, and under-counting one written with non-ASCII letters would let it through.
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
         u == '_' || u == '-' || u >= 0x80;
}

// An open inline table or array, and the depth of the node it is.
struct Frame {
  char kind = '{';
  std::size_t depth = 0;
};

class DepthScanner {
public:
  DepthScanner(std::string_view text, std::size_t max_depth) : m_text(text), m_max(max_depth) {}

  std::optional<TomlDepthProblem> run() {
    bool key_expected = true;  // at a line start outside brackets, or after `{` or `,` in one
    while (m_pos < m_text.size() && !m_problem) {
      const char c = m_text[m_pos];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++m_pos;
      } else if (c == '\n') {
        ++m_pos;
        if (m_stack.empty()) {
          key_expected = true;
        }
      } else if (c == '#') {
        skip_to_line_end();
      } else if (key_expected) {
        key_expected = false;
        scan_key_position();
      } else if (c == '"' || c == '\'') {
        skip_string();
      } else if (c == '{' || c == '[') {
        // A value: an element of the enclosing array, else the value of the last key.
        const bool in_array = !m_stack.empty() && m_stack.back().kind == '[';
        const std::size_t depth = in_array ? m_stack.back().depth + 1 : m_value_depth;
        check(depth, m_pos);
        m_stack.push_back(Frame{c, depth});
        ++m_pos;
        key_expected = c == '{';
      } else if (c == '}' || c == ']') {
        if (!m_stack.empty()) {
          m_stack.pop_back();
        }
        ++m_pos;
      } else if (c == ',') {
        key_expected = !m_stack.empty() && m_stack.back().kind == '{';
        ++m_pos;
      } else {
        ++m_pos;  // `=`, numbers, dates, booleans: dots in them are not key parts
      }
    }
    return m_problem;
  }

private:
  // At the start of a key, or of a `[table]` / `[[array]]` header at the top level.
  void scan_key_position() {
    const std::size_t start = m_pos;
    if (m_stack.empty() && m_text[m_pos] == '[') {
      const bool array_table = m_pos + 1 < m_text.size() && m_text[m_pos + 1] == '[';
      m_pos += array_table ? 2 : 1;
      // An array of tables adds the array's level to the header's parts.
      m_table_depth = count_key_parts() + (array_table ? 1 : 0);
      check(m_table_depth, start);
      // The closing brackets are read as stray `]`, which pop nothing.
      return;
    }
    const std::size_t parts = count_key_parts();
    if (parts == 0) {
      ++m_pos;  // not a key: leave it to toml++ to explain
      return;
    }
    const std::size_t base = m_stack.empty() ? m_table_depth : m_stack.back().depth;
    m_value_depth = base + parts;
    check(m_value_depth, start);
  }

  // `a . "b" . 'c'`: the number of parts, stopping at the first character that continues no
  // dotted key.
  std::size_t count_key_parts() {
    std::size_t parts = 0;
    while (m_pos < m_text.size()) {
      skip_blanks();
      if (m_pos >= m_text.size()) {
        break;
      }
      const char c = m_text[m_pos];
      if (c == '"' || c == '\'') {
        skip_string();
      } else if (is_key_char(c)) {
        while (m_pos < m_text.size() && is_key_char(m_text[m_pos])) {
          ++m_pos;
        }
      } else {
        break;
      }
      ++parts;
      skip_blanks();
      if (m_pos < m_text.size() && m_text[m_pos] == '.') {
        ++m_pos;
        continue;
      }
      break;
    }
    return parts;
  }

  void skip_blanks() {
    while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\t')) {
      ++m_pos;
    }
  }

  void skip_to_line_end() {
    while (m_pos < m_text.size() && m_text[m_pos] != '\n') {
      ++m_pos;
    }
  }

  // A basic or literal string, single- or multi-line; an unterminated one ends at the end of
  // its line (single-line) or of the text (multi-line).
  void skip_string() {
    const char quote = m_text[m_pos];
    const bool basic = quote == '"';
    const bool multi_line = m_text.substr(m_pos, 3) == std::string(3, quote);
    m_pos += multi_line ? 3 : 1;
    while (m_pos < m_text.size()) {
      const char c = m_text[m_pos];
      if (basic && c == '\\') {
        m_pos += 2;
        continue;
      }
      if (c == '\n' && !multi_line) {
        return;
      }
      if (c == quote && (!multi_line || m_text.substr(m_pos, 3) == std::string(3, quote))) {
        m_pos += multi_line ? 3 : 1;
        return;
      }
      ++m_pos;
    }
  }

  void check(std::size_t depth, std::size_t at) {
    if (depth <= m_max || m_problem) {
      return;
    }
    TomlDepthProblem problem;
    problem.line = 1;
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < at && i < m_text.size(); ++i) {
      if (m_text[i] == '\n') {
        ++problem.line;
        line_start = i + 1;
      }
    }
    problem.column = 1;
    for (std::size_t i = line_start; i < at && i < m_text.size(); ++i) {
      if ((static_cast<unsigned char>(m_text[i]) & 0xC0) != 0x80) {
        ++problem.column;
      }
    }
    problem.depth = depth;
    problem.message = fmt::format(
        "this key nests its value more than {} levels deep (table header, dotted key parts and "
        "enclosing inline tables and arrays together); no TOML file this program reads needs "
        "more",
        m_max);
    m_problem = std::move(problem);
  }

  std::string_view m_text;
  std::size_t m_max;
  std::size_t m_pos = 0;
  std::size_t m_table_depth = 0;
  std::size_t m_value_depth = 0;
  std::vector<Frame> m_stack;
  std::optional<TomlDepthProblem> m_problem;
};

}  // namespace

std::optional<TomlDepthProblem> find_over_deep_toml(std::string_view text, std::size_t max_depth) {
  return DepthScanner(text, max_depth).run();
}

Expected<void> check_toml_depth(std::string_view text, std::string_view file_name,
                                std::size_t max_depth) {
  if (const auto problem = find_over_deep_toml(text, max_depth)) {
    return fail(fmt::format("{}:{}:{}: {}", file_name, problem->line, problem->column,
                            problem->message));
  }
  return {};
}

}  // namespace kernelhub::util
