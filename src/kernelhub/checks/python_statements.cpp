// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/checks/python_statements.hpp>

#include <algorithm>
#include <array>
#include <optional>

namespace kernelhub::checks {

namespace {

constexpr std::array<std::string_view, 13> k_compound_keywords = {
    "if", "elif", "else", "try", "except", "finally", "for", "while", "with", "def", "class",
    "match", "case"};

bool is_name(const Token& token, std::string_view text) {
  return token.kind == TokenKind::name && token.text == text;
}

// The compound keyword a logical line starts with ("" for a simple statement). `match` and
// `case` are soft keywords: only headers when a colon ends the line.
std::string_view header_keyword(std::span<const Token> line) {
  std::size_t first = 0;
  if (is_name(line[0], "async") && line.size() > 1) {
    first = 1;
  }
  const auto word = line[first].text;
  if (line[first].kind != TokenKind::name ||
      std::find(k_compound_keywords.begin(), k_compound_keywords.end(), word) ==
          k_compound_keywords.end()) {
    return {};
  }
  if ((word == "match" || word == "case") &&
      (line.size() < 2 || line[1].kind == TokenKind::op || !is_op(line.back(), ":"))) {
    return {};
  }
  return word;
}

// Index of the colon that ends a header: the first ':' outside brackets and lambdas.
std::size_t header_colon(std::span<const Token> line) {
  int depth = 0;
  int lambdas = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const auto& token = line[i];
    if (token.kind == TokenKind::op) {
      if (token.text == "(" || token.text == "[" || token.text == "{") {
        ++depth;
      } else if (token.text == ")" || token.text == "]" || token.text == "}") {
        --depth;
      } else if (token.text == ":" && depth == 0) {
        if (lambdas > 0) {
          --lambdas;
        } else {
          return i;
        }
      }
    } else if (depth == 0 && is_name(token, "lambda")) {
      ++lambdas;
    }
  }
  return line.size();
}

void add_simple_statements(std::span<const Token> tokens, const std::vector<Block>& blocks,
                           std::vector<Statement>& out) {
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= tokens.size(); ++i) {
    const bool at_end = i == tokens.size();
    if (!at_end && tokens[i].kind == TokenKind::op) {
      const auto text = tokens[i].text;
      if (text == "(" || text == "[" || text == "{") {
        ++depth;
      } else if (text == ")" || text == "]" || text == "}") {
        --depth;
      }
    }
    if (at_end || (depth == 0 && is_op(tokens[i], ";"))) {
      if (i > start) {
        out.push_back(Statement{tokens.subspan(start, i - start), blocks});
      }
      start = i + 1;
    }
  }
}

void add_logical_line(std::span<const Token> line, std::vector<Block>& stack,
                      std::vector<Statement>& out) {
  const std::uint32_t indent = line[0].column;
  std::optional<Block> closed;  // the last block this line closes at its own indent
  while (!stack.empty() && stack.back().indent >= indent) {
    if (stack.back().indent == indent) {
      closed = std::move(stack.back());
    }
    stack.pop_back();
  }
  const auto keyword = header_keyword(line);
  if (keyword.empty()) {
    add_simple_statements(line, stack, out);
    return;
  }
  const auto colon = header_colon(line);
  add_simple_statements(line.subspan(0, colon), stack, out);
  Block block{std::string(keyword), false, indent, {}};
  if ((keyword == "elif" || keyword == "else") && closed &&
      (closed->keyword == "if" || closed->keyword == "elif")) {
    block.condition_names = closed->condition_names;
  }
  if (keyword == "if" || keyword == "elif") {
    block.type_checking = std::any_of(line.begin(), line.begin() + colon, [](const Token& t) {
      return is_name(t, "TYPE_CHECKING");
    });
    for (std::size_t i = 1; i < colon; ++i) {
      if (line[i].kind == TokenKind::name && !is_python_keyword(line[i].text)) {
        block.condition_names.emplace_back(line[i].text);
      }
    }
  }
  stack.push_back(block);
  if (colon + 1 < line.size()) {
    add_simple_statements(line.subspan(colon + 1), stack, out);
  }
}

}  // namespace

bool Statement::in_try_body() const {
  return std::any_of(blocks.begin(), blocks.end(),
                     [](const Block& block) { return block.keyword == "try"; });
}

bool Statement::in_except_handler() const {
  return std::any_of(blocks.begin(), blocks.end(),
                     [](const Block& block) { return block.keyword == "except"; });
}

bool Statement::type_checking_only() const {
  return std::any_of(blocks.begin(), blocks.end(),
                     [](const Block& block) { return block.type_checking; });
}

std::vector<Statement> split_statements(const std::vector<Token>& tokens) {
  std::vector<Statement> out;
  std::vector<Block> stack;
  std::size_t start = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].kind == TokenKind::newline || tokens[i].kind == TokenKind::end) {
      if (i > start) {
        add_logical_line(std::span<const Token>(tokens).subspan(start, i - start), stack, out);
      }
      start = i + 1;
    }
  }
  return out;
}

std::string dotted_name(std::span<const Token> tokens) {
  std::string name;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const bool want_name = i % 2 == 0;
    if (want_name ? tokens[i].kind != TokenKind::name : !is_op(tokens[i], ".")) {
      return {};
    }
    name += tokens[i].text;
  }
  return tokens.size() % 2 == 1 ? name : std::string();
}

namespace {

// Reads a dotted name at `i`, advancing past it.
std::string read_dotted(std::span<const Token> tokens, std::size_t& i) {
  std::string name;
  while (i < tokens.size() && tokens[i].kind == TokenKind::name &&
         !is_python_keyword(tokens[i].text)) {
    name += tokens[i].text;
    ++i;
    if (i + 1 < tokens.size() && is_op(tokens[i], ".") && tokens[i + 1].kind == TokenKind::name) {
      name += '.';
      ++i;
    } else {
      break;
    }
  }
  return name;
}

// Reads `as NAME` at `i` if present.
std::string read_alias(std::span<const Token> tokens, std::size_t& i) {
  if (i + 1 < tokens.size() && is_name(tokens[i], "as") && tokens[i + 1].kind == TokenKind::name) {
    i += 2;
    return std::string(tokens[i - 1].text);
  }
  return {};
}

void add_plain_import(const Statement& statement, std::vector<Import>& out) {
  const auto tokens = statement.tokens;
  std::size_t i = 1;
  while (i < tokens.size()) {
    Import import;
    import.line = tokens[0].line;
    import.column = tokens[0].column;
    import.statement = &statement;
    import.module = read_dotted(tokens, i);
    import.alias = read_alias(tokens, i);
    if (!import.module.empty()) {
      out.push_back(std::move(import));
    }
    while (i < tokens.size() && !is_op(tokens[i], ",")) {
      ++i;  // skip anything malformed up to the next module
    }
    ++i;
  }
}

void add_from_import(const Statement& statement, std::vector<Import>& out) {
  const auto tokens = statement.tokens;
  Import import;
  import.line = tokens[0].line;
  import.column = tokens[0].column;
  import.from_form = true;
  import.statement = &statement;
  std::size_t i = 1;
  while (i < tokens.size() && (is_op(tokens[i], ".") || is_op(tokens[i], "..."))) {
    import.level += static_cast<int>(tokens[i].text.size());
    ++i;
  }
  import.module = read_dotted(tokens, i);
  if (i >= tokens.size() || !is_name(tokens[i], "import")) {
    return;  // not an import statement after all (or malformed)
  }
  ++i;
  for (; i < tokens.size(); ++i) {
    if (tokens[i].kind == TokenKind::name) {
      std::string name(tokens[i].text);
      ++i;
      import.names.emplace_back(name, read_alias(tokens, i));
      --i;
    } else if (is_op(tokens[i], "*")) {
      import.names.emplace_back("*", "");
    }
  }
  out.push_back(std::move(import));
}

}  // namespace

std::vector<Import> find_imports(const std::vector<Statement>& statements) {
  std::vector<Import> out;
  for (const auto& statement : statements) {
    if (is_name(statement.tokens[0], "import")) {
      add_plain_import(statement, out);
    } else if (is_name(statement.tokens[0], "from")) {
      add_from_import(statement, out);
    }
  }
  return out;
}

}  // namespace kernelhub::checks
