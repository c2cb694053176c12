// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/codegen/template_expression.hpp>

#include <array>
#include <cmath>

#include <fmt/format.h>

#include <kernelhub/codegen/template_filters.hpp>
#include <kernelhub/util/did_you_mean.hpp>

namespace kernelhub::codegen::detail {

using nlohmann::json;

const Token& TokenCursor::peek(std::size_t ahead) const {
  const std::size_t index = std::min(m_index + ahead, m_tokens.size() - 1);
  return m_tokens[index];
}

const Token& TokenCursor::next() {
  const Token& token = peek();
  if (m_index + 1 < m_tokens.size()) {
    ++m_index;
  }
  return token;
}

bool TokenCursor::accept_symbol(std::string_view text) {
  if (peek().kind == TokenKind::symbol && peek().text == text) {
    next();
    return true;
  }
  return false;
}

bool TokenCursor::accept_name(std::string_view text) {
  if (peek().kind == TokenKind::name && peek().text == text) {
    next();
    return true;
  }
  return false;
}

namespace {

// Deeply nested input (a hostile CARD.md) must fail cleanly, not overflow the stack.
constexpr int k_max_depth = 64;

constexpr std::array<std::string_view, 5> k_keywords = {"and", "or", "not", "in", "is"};

bool is_keyword(std::string_view name) {
  return std::find(k_keywords.begin(), k_keywords.end(), name) != k_keywords.end();
}

std::string token_text(const Token& token) {
  switch (token.kind) {
    case TokenKind::end: return "end of tag";
    case TokenKind::string: return fmt::format("string \"{}\"", token.text);
    default: return fmt::format("\"{}\"", token.text);
  }
}

ExpressionPtr make(Expression::Kind kind, std::size_t offset) {
  auto expression = std::make_unique<Expression>();
  expression->kind = kind;
  expression->offset = offset;
  return expression;
}

ExpressionPtr make_binary(Expression::Kind kind, std::size_t offset, ExpressionPtr left,
                          ExpressionPtr right) {
  auto expression = make(kind, offset);
  expression->operands.push_back(std::move(left));
  expression->operands.push_back(std::move(right));
  return expression;
}

class ExpressionParser {
 public:
  ExpressionParser(TokenCursor& cursor, const TemplateSource& source)
      : m_cursor(cursor), m_source(source) {}

  util::Expected<ExpressionPtr> parse_or() {
    if (++m_depth > k_max_depth) {
      return m_source.fail_at(m_cursor.peek().offset, "expression nested too deeply");
    }
    auto left = KH_TRY(parse_and());
    while (m_cursor.peek().kind == TokenKind::name && m_cursor.peek().text == "or") {
      const std::size_t offset = m_cursor.next().offset;
      left = make_binary(Expression::Kind::disjunction, offset, std::move(left), KH_TRY(parse_and()));
    }
    --m_depth;
    return left;
  }

 private:
  util::Expected<ExpressionPtr> parse_and() {
    auto left = KH_TRY(parse_not());
    while (m_cursor.peek().kind == TokenKind::name && m_cursor.peek().text == "and") {
      const std::size_t offset = m_cursor.next().offset;
      left = make_binary(Expression::Kind::conjunction, offset, std::move(left), KH_TRY(parse_not()));
    }
    return left;
  }

  util::Expected<ExpressionPtr> parse_not() {
    const Token& token = m_cursor.peek();
    if (token.kind == TokenKind::name && token.text == "not") {
      const std::size_t offset = m_cursor.next().offset;
      if (++m_depth > k_max_depth) {
        return m_source.fail_at(offset, "expression nested too deeply");
      }
      auto negation = make(Expression::Kind::negation, offset);
      negation->operands.push_back(KH_TRY(parse_not()));
      --m_depth;
      return negation;
    }
    return parse_compare();
  }

  util::Expected<ExpressionPtr> parse_compare() {
    auto left = KH_TRY(parse_concat());
    while (true) {
      const Token& token = m_cursor.peek();
      const std::size_t offset = token.offset;
      Expression::Kind kind;
      if (m_cursor.accept_symbol("==")) {
        kind = Expression::Kind::equal;
      } else if (m_cursor.accept_symbol("!=")) {
        kind = Expression::Kind::not_equal;
      } else if (m_cursor.accept_name("in")) {
        kind = Expression::Kind::contains;
      } else if (token.kind == TokenKind::name && token.text == "not" &&
                 m_cursor.peek(1).kind == TokenKind::name && m_cursor.peek(1).text == "in") {
        m_cursor.next();
        m_cursor.next();
        kind = Expression::Kind::not_contains;
      } else {
        return left;
      }
      left = make_binary(kind, offset, std::move(left), KH_TRY(parse_concat()));
    }
  }

  util::Expected<ExpressionPtr> parse_concat() {
    auto left = KH_TRY(parse_filtered());
    while (m_cursor.peek().kind == TokenKind::symbol && m_cursor.peek().text == "~") {
      const std::size_t offset = m_cursor.next().offset;
      left = make_binary(Expression::Kind::concat, offset, std::move(left), KH_TRY(parse_filtered()));
    }
    return left;
  }

  util::Expected<ExpressionPtr> parse_filtered() {
    auto subject = KH_TRY(parse_postfix());
    while (true) {
      if (m_cursor.accept_symbol("|")) {
        subject = KH_TRY(parse_filter(std::move(subject)));
      } else if (m_cursor.accept_name("is")) {
        subject = KH_TRY(parse_test(std::move(subject)));
      } else {
        return subject;
      }
    }
  }

  util::Expected<ExpressionPtr> parse_filter(ExpressionPtr subject) {
    const Token& name = m_cursor.next();
    if (name.kind != TokenKind::name) {
      return m_source.fail_at(name.offset, fmt::format("expected a filter name after \"|\", got {}",
                                                       token_text(name)));
    }
    const Filter* filter = find_filter(name.text);
    if (filter == nullptr) {
      auto message = fmt::format("unknown filter \"{}\"", name.text);
      if (auto hint = util::did_you_mean(name.text, filter_names()); !hint.empty()) {
        message += "; " + hint;
      }
      return m_source.fail_at(name.offset, message);
    }
    auto expression = make(Expression::Kind::filter, name.offset);
    expression->name = name.text;
    expression->operands.push_back(std::move(subject));
    if (m_cursor.accept_symbol("(")) {
      auto arguments = KH_TRY(parse_sequence(")"));
      for (auto& argument : arguments) {
        expression->operands.push_back(std::move(argument));
      }
    }
    const std::size_t count = expression->operands.size() - 1;
    if (count < filter->min_arguments || count > filter->max_arguments) {
      return m_source.fail_at(name.offset,
                              fmt::format("filter \"{}\" takes {} to {} arguments, got {}",
                                          name.text, filter->min_arguments,
                                          filter->max_arguments, count));
    }
    return expression;
  }

  util::Expected<ExpressionPtr> parse_test(ExpressionPtr subject) {
    const bool negated = m_cursor.accept_name("not");
    const Token& name = m_cursor.next();
    if (name.kind != TokenKind::name || !is_known_test(name.text)) {
      auto message = fmt::format("unknown test {}", token_text(name));
      if (auto hint = util::did_you_mean(name.text, test_names()); !hint.empty()) {
        message += "; " + hint;
      }
      return m_source.fail_at(name.offset, message);
    }
    auto expression = make(Expression::Kind::test, name.offset);
    expression->name = name.text;
    expression->negated = negated;
    expression->operands.push_back(std::move(subject));
    return expression;
  }

  util::Expected<ExpressionPtr> parse_postfix() {
    auto subject = KH_TRY(parse_primary());
    while (true) {
      const std::size_t offset = m_cursor.peek().offset;
      if (m_cursor.accept_symbol(".")) {
        const Token& name = m_cursor.next();
        if (name.kind != TokenKind::name && name.kind != TokenKind::integer) {
          return m_source.fail_at(name.offset, fmt::format("expected an attribute name after \".\", got {}",
                                                           token_text(name)));
        }
        auto attribute = make(Expression::Kind::attribute, offset);
        attribute->name = name.text;
        attribute->operands.push_back(std::move(subject));
        subject = std::move(attribute);
      } else if (m_cursor.accept_symbol("[")) {
        auto index = KH_TRY(parse_or());
        if (!m_cursor.accept_symbol("]")) {
          return m_source.fail_at(m_cursor.peek().offset,
                                  fmt::format("expected \"]\", got {}", token_text(m_cursor.peek())));
        }
        subject = make_binary(Expression::Kind::item, offset, std::move(subject), std::move(index));
      } else {
        return subject;
      }
    }
  }

  util::Expected<ExpressionPtr> parse_primary() {
    const Token& token = m_cursor.next();
    switch (token.kind) {
      case TokenKind::string: {
        auto literal = make(Expression::Kind::literal, token.offset);
        literal->value = token.text;
        return literal;
      }
      case TokenKind::integer:
      case TokenKind::floating: {
        auto literal = make(Expression::Kind::literal, token.offset);
        try {
          literal->value = token.kind == TokenKind::integer ? json(std::stoll(token.text))
                                                            : json(std::stod(token.text));
        } catch (const std::out_of_range&) {
          return m_source.fail_at(token.offset, fmt::format("number \"{}\" is out of range", token.text));
        }
        return literal;
      }
      case TokenKind::name: return name_or_keyword(token);
      case TokenKind::symbol:
        if (token.text == "(") {
          auto inner = KH_TRY(parse_or());
          if (!m_cursor.accept_symbol(")")) {
            return m_source.fail_at(m_cursor.peek().offset,
                                    fmt::format("expected \")\", got {}", token_text(m_cursor.peek())));
          }
          return inner;
        }
        if (token.text == "[") {
          auto list = make(Expression::Kind::list, token.offset);
          list->operands = KH_TRY(parse_sequence("]"));
          return list;
        }
        break;
      case TokenKind::end: break;
    }
    return m_source.fail_at(token.offset, fmt::format("expected an expression, got {}", token_text(token)));
  }

  util::Expected<ExpressionPtr> name_or_keyword(const Token& token) {
    auto literal = make(Expression::Kind::literal, token.offset);
    if (token.text == "true" || token.text == "True") {
      literal->value = true;
      return literal;
    }
    if (token.text == "false" || token.text == "False") {
      literal->value = false;
      return literal;
    }
    if (token.text == "none" || token.text == "None") {
      return literal;  // json() is null
    }
    if (is_keyword(token.text)) {
      return m_source.fail_at(token.offset, fmt::format("expected an expression, got \"{}\"", token.text));
    }
    auto variable = make(Expression::Kind::variable, token.offset);
    variable->name = token.text;
    return variable;
  }

  // Comma-separated expressions up to `close`, which has already been opened.
  util::Expected<std::vector<ExpressionPtr>> parse_sequence(std::string_view close) {
    std::vector<ExpressionPtr> items;
    if (m_cursor.accept_symbol(close)) {
      return items;
    }
    while (true) {
      items.push_back(KH_TRY(parse_or()));
      if (m_cursor.accept_symbol(close)) {
        return items;
      }
      if (!m_cursor.accept_symbol(",")) {
        return m_source.fail_at(m_cursor.peek().offset,
                                fmt::format("expected \",\" or \"{}\", got {}", close,
                                            token_text(m_cursor.peek())));
      }
      if (m_cursor.accept_symbol(close)) {
        return items;  // a trailing comma, as Python allows
      }
    }
  }

  TokenCursor& m_cursor;
  const TemplateSource& m_source;
  int m_depth = 0;
};

}  // namespace

util::Expected<ExpressionPtr> parse_expression(TokenCursor& cursor, const TemplateSource& source) {
  ExpressionParser parser(cursor, source);
  return parser.parse_or();
}

std::string describe(const Expression& expression) {
  switch (expression.kind) {
    case Expression::Kind::variable: return expression.name;
    case Expression::Kind::attribute: {
      const auto base = describe(*expression.operands[0]);
      return base.empty() ? "" : base + "." + expression.name;
    }
    case Expression::Kind::item: {
      const auto base = describe(*expression.operands[0]);
      const auto& index = *expression.operands[1];
      if (base.empty() || index.kind != Expression::Kind::literal) {
        return "";
      }
      return fmt::format("{}[{}]", base, index.value.dump());
    }
    default: return "";
  }
}

}  // namespace kernelhub::codegen::detail
