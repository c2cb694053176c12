// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/codegen/template_engine.hpp>

#include <array>
#include <span>

#include <fmt/format.h>

#include <kernelhub/codegen/template_expression.hpp>
#include <kernelhub/codegen/template_lexer.hpp>
#include <kernelhub/util/did_you_mean.hpp>

// KH_TRY for Expected<void>, whose value() the packaged tl::expected lacks.
#define RETURN_IF_ERROR(expr)                                    \
  do {                                                           \
    if (auto kh_result_ = (expr); !kh_result_) {                 \
      return tl::unexpected(std::move(kh_result_).error());      \
    }                                                            \
  } while (false)

namespace kernelhub::codegen {

using nlohmann::json;
using namespace detail;

namespace {

constexpr int k_max_nesting = 64;

constexpr std::array<std::string_view, 8> k_statements = {
    "if", "elif", "else", "endif", "for", "endfor", "raw", "endraw"};

struct Node;

struct Branch {
  ExpressionPtr condition;  // nullptr for {% else %}
  std::vector<Node> body;
};

struct Node {
  enum class Kind { text, output, condition, loop };
  Kind kind = Kind::text;
  std::size_t offset = 0;
  std::string text;                // text
  ExpressionPtr expression;        // output; loop: the iterable
  std::vector<Branch> branches;    // condition
  std::string variable;            // loop
  std::vector<Node> body;          // loop
  std::vector<Node> otherwise;     // loop: {% else %}, rendered when there was nothing to iterate
};

// Builds the node tree from the pieces, one statement tag at a time.
class StatementParser {
 public:
  StatementParser(const std::vector<Piece>& pieces, const TemplateSource& source)
      : m_pieces(pieces), m_source(source) {}

  util::Expected<std::vector<Node>> parse_all() {
    std::string stop;
    return parse_block({}, stop, nullptr);
  }

 private:
  // Parses nodes until a statement named in `stops`, which is consumed and returned in
  // `stop` (its tag must hold nothing else). `opener` is the tag that opened this block.
  util::Expected<std::vector<Node>> parse_block(std::span<const std::string_view> stops,
                                                std::string& stop, const Piece* opener) {
    if (++m_nesting > k_max_nesting) {
      return m_source.fail_at(opener != nullptr ? opener->offset : 0, "blocks nested too deeply");
    }
    std::vector<Node> nodes;
    while (m_index < m_pieces.size()) {
      const Piece& piece = m_pieces[m_index++];
      if (piece.kind == PieceKind::text) {
        Node node;
        node.offset = piece.offset;
        node.text = piece.text;
        nodes.push_back(std::move(node));
        continue;
      }
      TokenCursor cursor(piece.tokens);
      if (piece.kind == PieceKind::output) {
        Node node;
        node.kind = Node::Kind::output;
        node.offset = piece.offset;
        node.expression = KH_TRY(parse_expression(cursor, m_source));
        RETURN_IF_ERROR(expect_end(cursor));
        nodes.push_back(std::move(node));
        continue;
      }
      const Token& keyword = cursor.next();
      if (keyword.kind != TokenKind::name) {
        return m_source.fail_at(keyword.offset, "expected a statement name");
      }
      if (std::find(stops.begin(), stops.end(), keyword.text) != stops.end()) {
        // `elif` carries a condition, which the caller parses.
        if (keyword.text != "elif") {
          RETURN_IF_ERROR(expect_end(cursor));
        }
        stop = keyword.text;
        --m_nesting;
        return nodes;
      }
      if (keyword.text == "if") {
        nodes.push_back(KH_TRY(parse_if(piece, cursor)));
      } else if (keyword.text == "for") {
        nodes.push_back(KH_TRY(parse_for(piece, cursor)));
      } else {
        return unexpected_statement(keyword, opener);
      }
    }
    if (opener != nullptr) {
      const std::string_view name = opener->tokens.front().text;
      return m_source.fail_at(opener->offset,
                              fmt::format("unclosed \"{}\" block: missing {{% end{} %}}", name,
                                          name == "for" ? "for" : "if"));
    }
    --m_nesting;
    return nodes;
  }

  util::Expected<Node> parse_if(const Piece& piece, TokenCursor& cursor) {
    static constexpr std::array<std::string_view, 3> k_stops = {"elif", "else", "endif"};
    static constexpr std::array<std::string_view, 1> k_end = {"endif"};
    Node node;
    node.kind = Node::Kind::condition;
    node.offset = piece.offset;
    ExpressionPtr condition = KH_TRY(parse_expression(cursor, m_source));
    RETURN_IF_ERROR(expect_end(cursor));
    while (true) {
      std::string stop;
      auto body = KH_TRY(parse_block(k_stops, stop, &piece));
      node.branches.push_back(Branch{std::move(condition), std::move(body)});
      if (stop == "elif") {
        TokenCursor elif_cursor(m_pieces[m_index - 1].tokens);
        elif_cursor.next();
        condition = KH_TRY(parse_expression(elif_cursor, m_source));
        RETURN_IF_ERROR(expect_end(elif_cursor));
        continue;
      }
      if (stop == "else") {
        auto otherwise = KH_TRY(parse_block(k_end, stop, &piece));
        node.branches.push_back(Branch{nullptr, std::move(otherwise)});
      }
      return node;
    }
  }

  util::Expected<Node> parse_for(const Piece& piece, TokenCursor& cursor) {
    static constexpr std::array<std::string_view, 2> k_stops = {"else", "endfor"};
    static constexpr std::array<std::string_view, 1> k_end = {"endfor"};
    Node node;
    node.kind = Node::Kind::loop;
    node.offset = piece.offset;
    const Token& variable = cursor.next();
    if (variable.kind != TokenKind::name) {
      return m_source.fail_at(variable.offset, "expected a loop variable name after \"for\"");
    }
    if (variable.text == "loop") {
      return m_source.fail_at(variable.offset, "\"loop\" is reserved for the loop's state");
    }
    node.variable = variable.text;
    if (!cursor.accept_name("in")) {
      return m_source.fail_at(cursor.peek().offset, "expected \"in\" after the loop variable");
    }
    node.expression = KH_TRY(parse_expression(cursor, m_source));
    RETURN_IF_ERROR(expect_end(cursor));
    std::string stop;
    node.body = KH_TRY(parse_block(k_stops, stop, &piece));
    if (stop == "else") {
      node.otherwise = KH_TRY(parse_block(k_end, stop, &piece));
    }
    return node;
  }

  util::Expected<void> expect_end(const TokenCursor& cursor) const {
    if (!cursor.at_end()) {
      const Token& extra = cursor.peek();
      return m_source.fail_at(extra.offset, fmt::format("unexpected \"{}\" in tag", extra.text));
    }
    return {};
  }

  tl::unexpected<util::Error> unexpected_statement(const Token& keyword, const Piece* opener) const {
    const bool known = std::find(k_statements.begin(), k_statements.end(), keyword.text) !=
                       k_statements.end();
    if (!known) {
      auto message = fmt::format("unknown statement \"{}\"", keyword.text);
      if (auto hint = util::did_you_mean(keyword.text, k_statements); !hint.empty()) {
        message += "; " + hint;
      }
      return m_source.fail_at(keyword.offset, message);
    }
    if (opener == nullptr) {
      return m_source.fail_at(keyword.offset,
                              fmt::format("unexpected \"{}\" outside any block", keyword.text));
    }
    return m_source.fail_at(keyword.offset,
                            fmt::format("unexpected \"{}\" inside the \"{}\" block at {}",
                                        keyword.text, opener->tokens.front().text,
                                        m_source.locate(opener->offset)));
  }

  const std::vector<Piece>& m_pieces;
  const TemplateSource& m_source;
  std::size_t m_index = 0;
  int m_nesting = 0;
};

class Renderer {
 public:
  Renderer(const TemplateSource& source, const json& context) : m_source(source), m_scope(context) {}

  util::Expected<void> render(const std::vector<Node>& nodes, std::string& out) {
    for (const auto& node : nodes) {
      switch (node.kind) {
        case Node::Kind::text: out += node.text; break;
        case Node::Kind::output: {
          auto value = KH_TRY(evaluate(*node.expression, m_scope, m_source));
          if (!value.defined) {
            const auto name = describe(*node.expression);
            return m_source.fail_at(node.expression->offset,
                                    name.empty() ? std::string("cannot print an undefined value")
                                                 : fmt::format("\"{}\" is undefined", name));
          }
          out += to_text(value.data);
          break;
        }
        case Node::Kind::condition: RETURN_IF_ERROR(render_condition(node, out)); break;
        case Node::Kind::loop: RETURN_IF_ERROR(render_loop(node, out)); break;
      }
    }
    return {};
  }

 private:
  util::Expected<void> render_condition(const Node& node, std::string& out) {
    for (const auto& branch : node.branches) {
      if (branch.condition == nullptr ||
          is_truthy(KH_TRY(evaluate(*branch.condition, m_scope, m_source)))) {
        return render(branch.body, out);
      }
    }
    return {};
  }

  util::Expected<void> render_loop(const Node& node, std::string& out) {
    auto iterable = KH_TRY(evaluate(*node.expression, m_scope, m_source));
    json items = json::array();
    if (iterable.defined && iterable.data.is_array()) {
      items = std::move(iterable.data);
    } else if (iterable.defined && iterable.data.is_object()) {
      for (const auto& entry : iterable.data.items()) {
        items.push_back(entry.key());  // mappings iterate over their keys, as in Jinja
      }
    } else if (iterable.defined) {
      return m_source.fail_at(node.expression->offset,
                              fmt::format("cannot iterate over {}", iterable.data.type_name()));
    }
    if (items.empty()) {
      return render(node.otherwise, out);
    }
    const std::size_t length = items.size();
    for (std::size_t i = 0; i < length; ++i) {
      m_scope.push("loop", json{{"index", i + 1},
                                {"index0", i},
                                {"revindex", length - i},
                                {"revindex0", length - i - 1},
                                {"first", i == 0},
                                {"last", i + 1 == length},
                                {"length", length}});
      m_scope.push(node.variable, std::move(items[i]));
      auto rendered = render(node.body, out);
      m_scope.pop();
      m_scope.pop();
      if (!rendered) {
        return rendered;
      }
    }
    return {};
  }

  const TemplateSource& m_source;
  Scope m_scope;
};

}  // namespace

struct Template::Impl {
  TemplateSource source;
  std::vector<Node> nodes;
};

Template::Template(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;
Template::~Template() = default;

util::Expected<Template> Template::parse(std::string_view text, std::string name,
                                         TemplateOptions options) {
  auto impl = std::make_unique<Impl>(Impl{TemplateSource(std::move(name), std::string(text)), {}});
  const auto pieces = KH_TRY(lex_template(impl->source, options));
  StatementParser parser(pieces, impl->source);
  impl->nodes = KH_TRY(parser.parse_all());
  return Template(std::move(impl));
}

util::Expected<std::string> Template::render(const json& context) const {
  if (!context.is_object()) {
    return util::fail(fmt::format("template context must be an object, got {}",
                                  context.type_name()));
  }
  Renderer renderer(m_impl->source, context);
  std::string out;
  RETURN_IF_ERROR(renderer.render(m_impl->nodes, out));
  return out;
}

util::Expected<std::string> render_template(std::string_view text, std::string name,
                                            const json& context, TemplateOptions options) {
  const auto parsed = KH_TRY(Template::parse(text, std::move(name), options));
  return parsed.render(context);
}

}  // namespace kernelhub::codegen
