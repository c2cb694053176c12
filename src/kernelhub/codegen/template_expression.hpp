// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <kernelhub/codegen/template_lexer.hpp>
#include <kernelhub/util/expected.hpp>

// Internals of the template engine: expressions, their parser and their evaluation.
namespace kernelhub::codegen::detail {

struct Expression;
using ExpressionPtr = std::unique_ptr<Expression>;

struct Expression {
  enum class Kind {
    literal,    // value
    variable,   // name
    attribute,  // operands[0].name
    item,       // operands[0][operands[1]]
    list,       // [operands...]
    negation,   // not operands[0]
    conjunction,
    disjunction,
    equal,
    not_equal,
    contains,      // operands[0] in operands[1]
    not_contains,  // operands[0] not in operands[1]
    concat,        // operands[0] ~ operands[1]
    filter,        // operands[0] | name(operands[1..])
    test,          // operands[0] is [not] name; `negated` holds the `not`
  };

  Kind kind = Kind::literal;
  std::size_t offset = 0;
  nlohmann::json value;
  std::string name;
  bool negated = false;
  std::vector<ExpressionPtr> operands;
};

// Reads tokens of one tag; the last token is always TokenKind::end.
class TokenCursor {
 public:
  explicit TokenCursor(const std::vector<Token>& tokens) : m_tokens(tokens) {}

  const Token& peek(std::size_t ahead = 0) const;
  const Token& next();
  bool at_end() const { return peek().kind == TokenKind::end; }
  // Consumes the next token if it is the symbol / the name `text`.
  bool accept_symbol(std::string_view text);
  bool accept_name(std::string_view text);

 private:
  const std::vector<Token>& m_tokens;
  std::size_t m_index = 0;
};

util::Expected<ExpressionPtr> parse_expression(TokenCursor& cursor, const TemplateSource& source);

// Names visible while rendering: loop variables over the render context.
class Scope {
 public:
  explicit Scope(const nlohmann::json& root) : m_root(root) {}

  // nullptr when the name is undefined.
  const nlohmann::json* find(std::string_view name) const;
  void push(std::string name, nlohmann::json value) {
    m_locals.emplace_back(std::move(name), std::move(value));
  }
  void pop() { m_locals.pop_back(); }

 private:
  const nlohmann::json& m_root;
  std::vector<std::pair<std::string, nlohmann::json>> m_locals;
};

// The result of evaluating an expression: a JSON value, or undefined.
struct Value {
  nlohmann::json data;
  bool defined = true;
};

util::Expected<Value> evaluate(const Expression& expression, const Scope& scope,
                               const TemplateSource& source);

bool is_truthy(const Value& value);

// How a value prints: strings as they are, none/true/false as minijinja spells them.
std::string to_text(const nlohmann::json& value);

// How an expression reads in messages, e.g. "loop.index" (empty for non-name expressions).
std::string describe(const Expression& expression);

}  // namespace kernelhub::codegen::detail
