// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/checks/python_tokenizer.hpp>

#include <algorithm>
#include <array>
#include <cctype>

namespace kernelhub::checks {

namespace {

constexpr std::array k_keywords = {
    "False", "None",   "True",    "and",      "as",   "assert", "async",  "await",
    "break", "class",  "continue", "def",     "del",  "elif",   "else",   "except",
    "finally", "for",  "from",    "global",   "if",   "import", "in",     "is",
    "lambda", "nonlocal", "not",  "or",       "pass", "raise",  "return", "try",
    "while", "with",   "yield"};

// Longest first, so "**=" wins over "**" and "*".
constexpr std::array<std::string_view, 25> k_operators = {
    "**=", "//=", ">>=", "<<=", "...", "!=", "==", "<=", ">=", "->", "**", "//", "<<",
    ">>",  "+=",  "-=",  "*=",  "/=",  "%=", "&=", "|=", "^=", "@=", ":=", "~"};

bool is_name_start(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalpha(u) != 0 || c == '_' || u >= 0x80;  // non-ASCII identifiers
}

bool is_name_char(char c) {
  return is_name_start(c) || std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// True when `prefix` is a valid string prefix: r, u, b, f, t and the two-letter mixes.
bool is_string_prefix(std::string_view prefix, bool& formatted) {
  std::string lower;
  for (char c : prefix) {
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  // "" is the unprefixed string (seen when scanning inside a replacement field).
  static constexpr std::array<std::string_view, 12> k_prefixes = {
      "", "r", "u", "b", "f", "t", "br", "rb", "fr", "rf", "tr", "rt"};
  if (std::find(k_prefixes.begin(), k_prefixes.end(), lower) == k_prefixes.end()) {
    return false;
  }
  formatted = lower.find('f') != std::string::npos || lower.find('t') != std::string::npos;
  return true;
}

class Scanner {
 public:
  explicit Scanner(std::string_view source) : m_source(source) {
    m_line_starts.push_back(0);
    for (std::size_t i = 0; i < source.size(); ++i) {
      if (source[i] == '\n' || (source[i] == '\r' && (i + 1 == source.size() ||
                                                       source[i + 1] != '\n'))) {
        m_line_starts.push_back(i + 1);
      }
    }
  }

  TokenizedSource run() {
    while (m_pos < m_source.size() && !m_result.error) {
      step();
    }
    if (!m_result.tokens.empty() && m_result.tokens.back().kind != TokenKind::newline) {
      push(TokenKind::newline, m_source.size(), m_source.size());
    }
    push(TokenKind::end, m_source.size(), m_source.size());
    return std::move(m_result);
  }

 private:
  void step() {
    const char c = m_source[m_pos];
    if (c == '\n' || c == '\r') {
      if (m_depth == 0 && !m_result.tokens.empty() &&
          m_result.tokens.back().kind != TokenKind::newline) {
        push(TokenKind::newline, m_pos, m_pos + 1);
      }
      ++m_pos;
    } else if (c == ' ' || c == '\t' || c == '\f') {
      ++m_pos;
    } else if (c == '#') {
      while (m_pos < m_source.size() && m_source[m_pos] != '\n' && m_source[m_pos] != '\r') {
        ++m_pos;
      }
    } else if (c == '\\') {
      // A continuation joins the next line; anything else after a backslash is an error
      // Python would report, harmless to skip here.
      ++m_pos;
      if (m_pos < m_source.size() && m_source[m_pos] == '\r') {
        ++m_pos;
      }
      if (m_pos < m_source.size() && m_source[m_pos] == '\n') {
        ++m_pos;
      }
    } else if (is_name_start(c)) {
      name_or_string();
    } else if (c == '"' || c == '\'') {
      string_token(m_pos, m_pos, false);
    } else if (std::isdigit(static_cast<unsigned char>(c)) != 0 ||
               (c == '.' && m_pos + 1 < m_source.size() &&
                std::isdigit(static_cast<unsigned char>(m_source[m_pos + 1])) != 0)) {
      number();
    } else {
      op();
    }
  }

  void name_or_string() {
    const std::size_t start = m_pos;
    while (m_pos < m_source.size() && is_name_char(m_source[m_pos])) {
      ++m_pos;
    }
    bool formatted = false;
    if (m_pos < m_source.size() && (m_source[m_pos] == '"' || m_source[m_pos] == '\'') &&
        m_pos - start <= 2 &&
        is_string_prefix(m_source.substr(start, m_pos - start), formatted)) {
      string_token(start, m_pos, formatted);
      return;
    }
    push(TokenKind::name, start, m_pos);
  }

  void number() {
    const std::size_t start = m_pos;
    while (m_pos < m_source.size()) {
      const char c = m_source[m_pos];
      const bool exponent_sign = (c == '+' || c == '-') && m_pos > start &&
                                 (m_source[m_pos - 1] == 'e' || m_source[m_pos - 1] == 'E') &&
                                 !(m_source.substr(start, 2) == "0x" ||
                                   m_source.substr(start, 2) == "0X");
      if (!is_name_char(c) && c != '.' && !exponent_sign) {
        break;
      }
      ++m_pos;
    }
    push(TokenKind::number, start, m_pos);
  }

  void op() {
    const std::size_t start = m_pos;
    for (auto candidate : k_operators) {
      if (m_source.substr(m_pos, candidate.size()) == candidate) {
        m_pos += candidate.size();
        push(TokenKind::op, start, m_pos);
        return;
      }
    }
    const char c = m_source[m_pos++];
    if (c == '(' || c == '[' || c == '{') {
      ++m_depth;
    } else if ((c == ')' || c == ']' || c == '}') && m_depth > 0) {
      --m_depth;
    }
    push(TokenKind::op, start, m_pos);
  }

  // A string whose prefix starts at `start` and whose opening quote is at `quote`.
  void string_token(std::size_t start, std::size_t quote, bool formatted) {
    const char q = m_source[quote];
    const bool triple = m_source.substr(quote, 3) == std::string(3, q);
    const std::size_t open = quote + (triple ? 3 : 1);
    const auto end = scan_string_body(open, q, triple, formatted);
    if (!end) {
      return;
    }
    const std::size_t close = *end - (triple ? 3 : 1);
    m_pos = *end;
    push(TokenKind::string, start, m_pos);
    m_result.tokens.back().value = std::string(m_source.substr(open, close - open));
    m_result.tokens.back().formatted = formatted;
  }

  // Scans from `pos` (just after the opening quotes) to just past the closing quotes; on an
  // unterminated string records the error at `pos` and returns nullopt.
  // Raw strings scan the same way: a backslash still keeps the next quote from closing them.
  std::optional<std::size_t> scan_string_body(std::size_t pos, char q, bool triple,
                                              bool formatted) {
    const std::size_t opened_at = pos;
    while (pos < m_source.size()) {
      const char c = m_source[pos];
      if (c == '\\') {
        pos += 2;  // escapes the next character, in raw strings too, as far as quoting goes
        continue;
      }
      if ((c == '\n' || c == '\r') && !triple) {
        break;
      }
      if (c == q && (!triple || m_source.substr(pos, 3) == std::string(3, q))) {
        return pos + (triple ? 3 : 1);
      }
      if (formatted && c == '{') {
        if (pos + 1 < m_source.size() && m_source[pos + 1] == '{') {
          pos += 2;
          continue;
        }
        auto after = scan_replacement_field(pos + 1);
        if (!after) {
          return std::nullopt;
        }
        pos = *after;
        continue;
      }
      ++pos;
    }
    fail(opened_at, triple ? "unterminated triple-quoted string" : "unterminated string");
    return std::nullopt;
  }

  // From just after a replacement field's `{` to just after its `}`: an expression (which may
  // hold strings with any quotes, brackets and comments) then an optional format spec that may
  // nest further fields.
  std::optional<std::size_t> scan_replacement_field(std::size_t pos) {
    int depth = 0;
    while (pos < m_source.size()) {
      const char c = m_source[pos];
      if (c == '"' || c == '\'') {
        std::size_t prefix = pos;
        while (prefix > 0 && is_name_char(m_source[prefix - 1])) {
          --prefix;
        }
        bool formatted = false;
        if (!is_string_prefix(m_source.substr(prefix, pos - prefix), formatted)) {
          formatted = false;
        }
        const bool triple = m_source.substr(pos, 3) == std::string(3, c);
        auto end = scan_string_body(pos + (triple ? 3 : 1), c, triple, formatted);
        if (!end) {
          return std::nullopt;
        }
        pos = *end;
        continue;
      }
      if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if ((c == ')' || c == ']') && depth > 0) {
        --depth;
      } else if (c == '}') {
        if (depth == 0) {
          return pos + 1;
        }
        --depth;
      } else if (c == ':' && depth == 0 && m_source.substr(pos, 2) != ":=") {
        return scan_format_spec(pos + 1);
      }
      ++pos;
    }
    return pos;  // the enclosing string reports the missing end
  }

  std::optional<std::size_t> scan_format_spec(std::size_t pos) {
    while (pos < m_source.size()) {
      const char c = m_source[pos];
      if (c == '}') {
        return pos + 1;
      }
      if (c == '{') {
        auto after = scan_replacement_field(pos + 1);
        if (!after) {
          return std::nullopt;
        }
        pos = *after;
        continue;
      }
      if (c == '\n' || c == '\r' || c == '"' || c == '\'') {
        return pos;  // malformed spec: let the string scanner decide
      }
      ++pos;
    }
    return pos;
  }

  void push(TokenKind kind, std::size_t begin, std::size_t end) {
    Token token;
    token.kind = kind;
    token.text = m_source.substr(begin, end - begin);
    locate(begin, token.line, token.column);
    m_result.tokens.push_back(std::move(token));
  }

  void fail(std::size_t offset, std::string message) {
    TokenizeError error;
    locate(offset, error.line, error.column);
    error.message = std::move(message);
    m_result.error = std::move(error);
    m_pos = m_source.size();
  }

  void locate(std::size_t offset, std::uint32_t& line, std::uint32_t& column) const {
    auto it = std::upper_bound(m_line_starts.begin(), m_line_starts.end(), offset);
    const auto index = static_cast<std::size_t>(it - m_line_starts.begin()) - 1;
    line = static_cast<std::uint32_t>(index + 1);
    column = static_cast<std::uint32_t>(offset - m_line_starts[index] + 1);
  }

  std::string_view m_source;
  std::vector<std::size_t> m_line_starts;
  std::size_t m_pos = 0;
  int m_depth = 0;
  TokenizedSource m_result;
};

}  // namespace

TokenizedSource tokenize_python(std::string_view source) { return Scanner(source).run(); }

bool is_python_keyword(std::string_view name) {
  return std::find(k_keywords.begin(), k_keywords.end(), name) != k_keywords.end();
}

}  // namespace kernelhub::checks
