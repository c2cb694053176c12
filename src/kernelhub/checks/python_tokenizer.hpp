// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// A tokenizer of Python source, enough for the build checks to find calls, decorators and
// imports without a Python interpreter (Debian packages no C++ Python parser). It knows every
// string form (all prefixes, triple quotes, f-strings with nested quotes and replacement
// fields), comments, backslash continuations and brackets, so text inside strings and comments
// never looks like code and bracketed newlines never end a statement. It does not build a tree.
namespace kernelhub::checks {

enum class TokenKind { name, number, string, op, newline, end };

struct Token {
  TokenKind kind = TokenKind::end;
  std::string_view text;  // the token's source text, prefix and quotes included
  std::uint32_t line = 0;    // 1-based
  std::uint32_t column = 0;  // 1-based, in bytes (Python's col_offset + 1)
  std::string value;  // strings: the content between the quotes, escapes kept as written
  bool formatted = false;  // an f- or t-string: its value is a template, not the text
};

// True for an operator or bracket token spelled `text`.
inline bool is_op(const Token& token, std::string_view text) {
  return token.kind == TokenKind::op && token.text == text;
}

struct TokenizeError {
  std::uint32_t line = 0;
  std::uint32_t column = 0;
  std::string message;  // e.g. "unterminated string"
};

struct TokenizedSource {
  // Every token in order; logical lines end in a `newline` token, the last token is `end`.
  std::vector<Token> tokens;
  std::optional<TokenizeError> error;  // tokens stop where it happened
};

// Tokenizes `source`. Tokens' text views point into `source`, which must outlive them.
TokenizedSource tokenize_python(std::string_view source);

// True for Python's hard keywords (`if`, `import`, `def`, ...), which are never callees.
bool is_python_keyword(std::string_view name);

}  // namespace kernelhub::checks
