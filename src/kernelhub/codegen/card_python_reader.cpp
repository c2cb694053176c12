// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/codegen/card_python_reader.hpp>

#include <algorithm>
#include <array>
#include <cstdint>

namespace kernelhub::codegen {

namespace {

struct PyToken {
  enum class Kind { name, string, op, other } kind = Kind::other;
  std::string text;    // names and ops as written; strings decoded
  bool plain = false;  // strings only: a str literal (not bytes, not an f-string)
};

// One logical line (statements split at top-level ';'); `indented` is false for module level.
struct Statement {
  bool indented = false;
  std::vector<PyToken> tokens;
};

bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

void append_utf8(std::string& out, std::uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

std::optional<std::uint32_t> parse_hex(std::string_view digits) {
  std::uint32_t value = 0;
  for (const char c : digits) {
    int digit = -1;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    }
    if (digit < 0) {
      return std::nullopt;
    }
    value = value * 16 + static_cast<std::uint32_t>(digit);
  }
  return value;
}

// Decodes one escape of a non-raw string whose backslash is at body[i]; advances i past it.
// Unknown escapes keep their backslash, as Python does.
void decode_escape(std::string_view body, std::size_t& i, std::string& out) {
  const char c = i + 1 < body.size() ? body[i + 1] : '\\';
  i += 2;
  switch (c) {
    case '\n': return;
    case '\\': out += '\\'; return;
    case '\'': out += '\''; return;
    case '"': out += '"'; return;
    case 'n': out += '\n'; return;
    case 't': out += '\t'; return;
    case 'r': out += '\r'; return;
    case 'a': out += '\a'; return;
    case 'b': out += '\b'; return;
    case 'f': out += '\f'; return;
    case 'v': out += '\v'; return;
    default: break;
  }
  if (c >= '0' && c <= '7') {
    std::uint32_t value = static_cast<std::uint32_t>(c - '0');
    for (int n = 0; n < 2 && i < body.size() && body[i] >= '0' && body[i] <= '7'; ++n, ++i) {
      value = value * 8 + static_cast<std::uint32_t>(body[i] - '0');
    }
    append_utf8(out, value);
    return;
  }
  const std::size_t width = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
  if (width != 0 && i + width <= body.size()) {
    if (const auto value = parse_hex(body.substr(i, width))) {
      append_utf8(out, *value);
      i += width;
      return;
    }
  }
  out += '\\';
  out += c;
}

class Tokenizer {
 public:
  explicit Tokenizer(std::string_view source) : m_source(source) {}

  // nullopt when a string is not terminated: the reference's parser would fail too.
  std::optional<std::vector<Statement>> run() {
    while (m_pos < m_source.size()) {
      const char c = m_source[m_pos];
      m_token_start = m_pos;
      if (c == '#') {
        while (m_pos < m_source.size() && m_source[m_pos] != '\n') {
          ++m_pos;
        }
      } else if (c == '\\' && next_is_newline()) {
        m_pos += m_source[m_pos + 1] == '\r' ? 3 : 2;
      } else if (c == '\n') {
        ++m_pos;
        if (m_depth == 0) {
          end_statement();
          m_line_start = m_pos;
        }
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
        ++m_pos;
      } else if (c == '\'' || c == '"') {
        if (!read_string("")) {
          return std::nullopt;
        }
      } else if (is_name_start(c)) {
        if (!read_name()) {
          return std::nullopt;
        }
      } else if (c >= '0' && c <= '9') {
        const auto start = m_pos;
        while (m_pos < m_source.size() && (is_name_char(m_source[m_pos]) || m_source[m_pos] == '.')) {
          ++m_pos;
        }
        push({PyToken::Kind::other, std::string(m_source.substr(start, m_pos - start)), false});
      } else if (c == ';' && m_depth == 0) {
        ++m_pos;
        end_statement(/*semicolon=*/true);
      } else {
        read_op();
      }
    }
    end_statement();
    return std::move(m_statements);
  }

 private:
  bool next_is_newline() const {
    return m_pos + 1 < m_source.size() &&
           (m_source[m_pos + 1] == '\n' ||
            (m_source[m_pos + 1] == '\r' && m_pos + 2 < m_source.size() &&
             m_source[m_pos + 2] == '\n'));
  }

  void push(PyToken token) {
    if (m_current.tokens.empty()) {
      m_current.indented = m_inherit_indent ? m_inherited_indented : m_token_start != m_line_start;
    }
    m_current.tokens.push_back(std::move(token));
  }

  // Ends the statement at a newline or, with `semicolon`, at a top-level ';' whose next
  // statement shares this one's nesting level (or is nested, after `if x: a; b`).
  void end_statement(bool semicolon = false) {
    if (semicolon) {
      if (!m_current.tokens.empty()) {
        const auto& first = m_current.tokens.front();
        static constexpr std::array<std::string_view, 11> k_compound = {
            "if", "elif", "else", "for", "while", "def", "class", "with", "try", "except", "async"};
        m_inherited_indented =
            m_current.indented ||
            (first.kind == PyToken::Kind::name &&
             std::find(k_compound.begin(), k_compound.end(), first.text) != k_compound.end());
        m_inherit_indent = true;
      }
    } else {
      m_inherit_indent = false;
    }
    if (!m_current.tokens.empty()) {
      m_statements.push_back(std::move(m_current));
      m_current = Statement{};
    }
  }

  bool read_name() {
    const auto start = m_pos;
    while (m_pos < m_source.size() && is_name_char(m_source[m_pos])) {
      ++m_pos;
    }
    const auto word = m_source.substr(start, m_pos - start);
    const bool quote_follows =
        m_pos < m_source.size() && (m_source[m_pos] == '\'' || m_source[m_pos] == '"');
    if (quote_follows && word.size() <= 2) {
      std::string prefix(word);
      std::transform(prefix.begin(), prefix.end(), prefix.begin(),
                     [](char ch) { return static_cast<char>(ch | 0x20); });
      static constexpr std::array<std::string_view, 12> k_prefixes = {
          "r", "u", "b", "f", "t", "br", "rb", "fr", "rf", "tr", "rt", "ur"};
      if (std::find(k_prefixes.begin(), k_prefixes.end(), prefix) != k_prefixes.end()) {
        return read_string(prefix);
      }
    }
    push({PyToken::Kind::name, std::string(word), false});
    return true;
  }

  bool read_string(std::string_view prefix) {
    const char quote = m_source[m_pos];
    const bool triple = m_source.substr(m_pos, 3) == std::string(3, quote);
    const std::size_t quote_length = triple ? 3 : 1;
    const bool raw = prefix.find('r') != std::string_view::npos;
    m_pos += quote_length;
    std::string value;
    for (;;) {
      if (m_pos >= m_source.size()) {
        return false;
      }
      const char c = m_source[m_pos];
      if (c == quote && (!triple || m_source.substr(m_pos, 3) == std::string(3, quote))) {
        m_pos += quote_length;
        break;
      }
      if (c == '\n' && !triple) {
        return false;
      }
      if (c == '\\') {
        if (raw) {
          value += c;
          if (m_pos + 1 < m_source.size()) {
            value += m_source[m_pos + 1];
          }
          m_pos += 2;
        } else {
          decode_escape(m_source, m_pos, value);
        }
        continue;
      }
      value += c;
      ++m_pos;
    }
    const bool plain = prefix.find_first_of("bft") == std::string_view::npos;
    push({PyToken::Kind::string, std::move(value), plain});
    return true;
  }

  void read_op() {
    static constexpr std::array<std::string_view, 26> k_long_ops = {
        "**=", "//=", ">>=", "<<=", "...", "->", ":=", "==", "!=", "<=", ">=", "+=", "-=",
        "*=",  "/=",  "%=",  "&=",  "|=",  "^=", "@=", "**", "//", "<<", ">>", "<>", "~="};
    for (const auto op : k_long_ops) {
      if (m_source.substr(m_pos, op.size()) == op) {
        m_pos += op.size();
        push({PyToken::Kind::op, std::string(op), false});
        return;
      }
    }
    const char c = m_source[m_pos++];
    if (c == '(' || c == '[' || c == '{') {
      ++m_depth;
    } else if ((c == ')' || c == ']' || c == '}') && m_depth > 0) {
      --m_depth;
    }
    push({PyToken::Kind::op, std::string(1, c), false});
  }

  std::string_view m_source;
  std::size_t m_pos = 0;
  std::size_t m_line_start = 0;
  std::size_t m_token_start = 0;  // where the token being read begins
  int m_depth = 0;
  bool m_inherit_indent = false;  // after a top-level ';'
  bool m_inherited_indented = false;
  Statement m_current;
  std::vector<Statement> m_statements;
};

bool is_open(const PyToken& token) {
  return token.kind == PyToken::Kind::op &&
         (token.text == "(" || token.text == "[" || token.text == "{");
}

bool is_close(const PyToken& token) {
  return token.kind == PyToken::Kind::op &&
         (token.text == ")" || token.text == "]" || token.text == "}");
}

using Tokens = std::vector<PyToken>;

// Splits at top-level (bracket depth 0) ops spelled `separator`.
std::vector<Tokens> split_top_level(const Tokens& tokens, std::string_view separator) {
  std::vector<Tokens> parts(1);
  int depth = 0;
  for (const auto& token : tokens) {
    if (is_open(token)) {
      ++depth;
    } else if (is_close(token)) {
      --depth;
    }
    if (depth == 0 && token.kind == PyToken::Kind::op && token.text == separator) {
      parts.emplace_back();
    } else {
      parts.back().push_back(token);
    }
  }
  return parts;
}

bool is_dunder_all_target(const Tokens& target, bool may_be_annotated) {
  if (target.empty() || target[0].kind != PyToken::Kind::name || target[0].text != "__all__") {
    return false;
  }
  return target.size() == 1 ||
         (may_be_annotated && target[1].kind == PyToken::Kind::op && target[1].text == ":");
}

// Whether `tokens` is one bracketed group from its first token to its last.
bool is_one_group(const Tokens& tokens) {
  int depth = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (is_open(tokens[i])) {
      ++depth;
    } else if (is_close(tokens[i])) {
      --depth;
      if (depth == 0 && i + 1 != tokens.size()) {
        return false;
      }
    }
  }
  return depth == 0;
}

// The elements of a list or tuple display; nullopt for any other expression.
std::optional<std::vector<Tokens>> sequence_elements(const Tokens& value) {
  if (value.empty()) {
    return std::nullopt;
  }
  const auto& first = value.front();
  const bool bracketed = first.kind == PyToken::Kind::op &&
                         (first.text == "[" || first.text == "(") && is_one_group(value);
  if (bracketed) {
    const Tokens inner(value.begin() + 1, value.end() - 1);
    auto elements = split_top_level(inner, ",");
    // `("a")` is a parenthesised string, not a tuple; `()` and `[]` are empty sequences.
    if (first.text == "(" && elements.size() == 1 && !inner.empty()) {
      return std::nullopt;
    }
    return elements;
  }
  auto elements = split_top_level(value, ",");
  if (elements.size() < 2) {
    return std::nullopt;  // not a bare tuple either
  }
  return elements;
}

}  // namespace

std::optional<std::vector<std::string>> read_dunder_all(std::string_view source) {
  const auto statements = Tokenizer(source).run();
  if (!statements) {
    return std::nullopt;
  }
  for (const auto& statement : *statements) {
    if (statement.indented) {
      continue;
    }
    const auto parts = split_top_level(statement.tokens, "=");
    if (parts.size() < 2) {
      continue;
    }
    bool targets_all = false;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      targets_all = targets_all || is_dunder_all_target(parts[i], parts.size() == 2);
    }
    if (!targets_all) {
      continue;
    }
    const auto elements = sequence_elements(parts.back());
    if (!elements) {
      continue;
    }
    std::vector<std::string> names;
    for (const auto& element : *elements) {
      const bool literal = !element.empty() && std::all_of(element.begin(), element.end(),
                                                           [](const PyToken& token) {
                                                             return token.kind ==
                                                                        PyToken::Kind::string &&
                                                                    token.plain;
                                                           });
      if (literal) {
        std::string name;
        for (const auto& token : element) {
          name += token.text;
        }
        names.push_back(std::move(name));
      }
    }
    if (!names.empty()) {
      return names;
    }
  }
  return std::nullopt;
}

std::vector<std::string> read_class_names(std::string_view source) {
  std::vector<std::string> names;
  const auto statements = Tokenizer(source).run();
  if (!statements) {
    return names;
  }
  for (const auto& statement : *statements) {
    const auto& tokens = statement.tokens;
    if (!statement.indented && tokens.size() >= 2 && tokens[0].kind == PyToken::Kind::name &&
        tokens[0].text == "class" && tokens[1].kind == PyToken::Kind::name) {
      names.push_back(tokens[1].text);
    }
  }
  return names;
}

namespace {

// One parameter of a `def`, as the card writes it: `**name`, `*name`, `name`, or a bare `*`/`/`
// marker; empty for what is not a parameter (a trailing comma's empty part).
std::string parameter_text(const Tokens& parameter) {
  if (parameter.empty()) {
    return {};
  }
  const auto& first = parameter[0];
  if (first.kind == PyToken::Kind::op && (first.text == "*" || first.text == "**")) {
    const bool named = parameter.size() > 1 && parameter[1].kind == PyToken::Kind::name;
    return named ? first.text + parameter[1].text : first.text;
  }
  if (first.kind == PyToken::Kind::op && first.text == "/") {
    return "/";
  }
  return first.kind == PyToken::Kind::name ? first.text : std::string();
}

// The parameter list of `def forward(...)`, or nullopt when `tokens` is not that statement.
std::optional<std::string> forward_parameters(const Tokens& tokens) {
  if (tokens.size() < 4 || tokens[0].text != "def" || tokens[1].text != "forward" ||
      tokens[2].kind != PyToken::Kind::op || tokens[2].text != "(") {
    return std::nullopt;
  }
  // The tokens inside the parentheses: up to the `)` that closes the first `(`.
  Tokens inside;
  int depth = 1;
  for (std::size_t i = 3; i < tokens.size(); ++i) {
    if (is_open(tokens[i])) {
      ++depth;
    } else if (is_close(tokens[i]) && --depth == 0) {
      break;
    }
    inside.push_back(tokens[i]);
  }
  std::string out;
  for (const auto& parameter : split_top_level(inside, ",")) {
    if (const auto text = parameter_text(parameter); !text.empty()) {
      out += (out.empty() ? "" : ", ") + text;
    }
  }
  return out;
}

}  // namespace

std::map<std::string, std::string> read_forward_parameters(std::string_view source) {
  std::map<std::string, std::string> forwards;
  const auto statements = Tokenizer(source).run();
  if (!statements) {
    return forwards;
  }
  std::optional<std::string> current_class;
  for (const auto& statement : *statements) {
    const auto& tokens = statement.tokens;
    if (!statement.indented) {
      const bool is_class = tokens.size() >= 2 && tokens[0].kind == PyToken::Kind::name &&
                            tokens[0].text == "class" && tokens[1].kind == PyToken::Kind::name;
      // A decorator line keeps no class open; the class statement after it opens one.
      current_class = is_class ? std::optional(tokens[1].text) : std::nullopt;
      continue;
    }
    if (current_class && !forwards.contains(*current_class)) {
      if (auto parameters = forward_parameters(tokens)) {
        forwards.emplace(*current_class, std::move(*parameters));
      }
    }
  }
  return forwards;
}

}  // namespace kernelhub::codegen
