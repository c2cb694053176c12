// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/codegen/template_engine.hpp>
#include <kernelhub/util/expected.hpp>

// Internals of the template engine: splitting a template into text and tags.
namespace kernelhub::codegen::detail {

// The template text plus what error messages need: its name and where each line starts.
class TemplateSource {
 public:
  TemplateSource(std::string name, std::string text);

  std::string_view text() const { return m_text; }
  // "name:line:column" for a byte offset into text().
  std::string locate(std::size_t offset) const;
  // An error value whose message starts with locate(offset).
  tl::unexpected<util::Error> fail_at(std::size_t offset, std::string_view message) const;

 private:
  std::string m_name;
  std::string m_text;
  std::vector<std::size_t> m_line_starts;
};

enum class TokenKind { name, string, integer, floating, symbol, end };

struct Token {
  TokenKind kind = TokenKind::end;
  std::string text;  // names and symbols as spelled, numbers as spelled, strings unescaped
  std::size_t offset = 0;
};

enum class PieceKind { text, output, statement };

// A run of literal text, an output tag `{{ }}` or a statement tag `{% %}`. Tags carry their
// tokens, always ending with a TokenKind::end token at the closing delimiter.
struct Piece {
  PieceKind kind = PieceKind::text;
  std::string text;
  std::vector<Token> tokens;
  std::size_t offset = 0;
};

// Splits the template into pieces. Comments and raw blocks are resolved here, as are the
// whitespace rules (`-` markers, trim_blocks, lstrip_blocks, the trailing newline), so the
// parser sees only text that will be printed as it stands.
util::Expected<std::vector<Piece>> lex_template(const TemplateSource& source,
                                                const TemplateOptions& options);

}  // namespace kernelhub::codegen::detail
