// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/codegen/template_lexer.hpp>

#include <algorithm>

#include <fmt/format.h>

namespace kernelhub::codegen::detail {

TemplateSource::TemplateSource(std::string name, std::string text)
    : m_name(std::move(name)), m_text(std::move(text)) {
  m_line_starts.push_back(0);
  for (std::size_t i = 0; i < m_text.size(); ++i) {
    if (m_text[i] == '\n') {
      m_line_starts.push_back(i + 1);
    }
  }
}

std::string TemplateSource::locate(std::size_t offset) const {
  const auto after = std::upper_bound(m_line_starts.begin(), m_line_starts.end(), offset);
  const auto line = static_cast<std::size_t>(after - m_line_starts.begin());
  const std::size_t column = offset - m_line_starts[line - 1] + 1;
  return fmt::format("{}:{}:{}", m_name, line, column);
}

tl::unexpected<util::Error> TemplateSource::fail_at(std::size_t offset,
                                                    std::string_view message) const {
  return util::fail(fmt::format("{}: {}", locate(offset), message));
}

namespace {

enum class ItemKind { text, output, statement, comment, raw_begin, raw_end };

// A piece before whitespace handling, with the `-` markers of tags still attached.
struct Item {
  ItemKind kind = ItemKind::text;
  std::string text;
  std::vector<Token> tokens;
  std::size_t offset = 0;
  bool strip_before = false;  // `{%-`: strip whitespace at the end of the preceding text
  bool strip_after = false;   // `-%}`: strip whitespace at the start of the following text
};

// Bounds the size, and so the depth, of one expression's syntax tree: evaluation recurses.
constexpr std::size_t k_max_tokens = 512;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class TagLexer {
 public:
  TagLexer(const TemplateSource& source, std::string_view text) : m_source(source), m_text(text) {}

  // Tokenizes from `pos` up to the closing `closer` ("}}" or "%}"); sets `end` past it.
  util::Expected<std::vector<Token>> lex(std::size_t tag_offset, std::size_t pos,
                                         std::string_view closer, std::size_t& end,
                                         bool& strip_after) {
    std::vector<Token> tokens;
    while (true) {
      while (pos < m_text.size() && is_space(m_text[pos])) {
        ++pos;
      }
      if (pos >= m_text.size()) {
        return m_source.fail_at(tag_offset, fmt::format("unclosed tag: missing \"{}\"", closer));
      }
      const std::string_view rest = m_text.substr(pos);
      if (rest.size() >= 3 && rest[0] == '-' && rest.substr(1, 2) == closer) {
        strip_after = true;
        tokens.push_back(Token{TokenKind::end, "", pos});
        end = pos + 3;
        return tokens;
      }
      if (rest.substr(0, 2) == closer) {
        tokens.push_back(Token{TokenKind::end, "", pos});
        end = pos + 2;
        return tokens;
      }
      if (tokens.size() >= k_max_tokens) {
        return m_source.fail_at(tag_offset, "tag is too long");
      }
      auto token = KH_TRY(lex_token(pos));
      pos += token.second;
      tokens.push_back(std::move(token.first));
    }
  }

 private:
  // Returns the token at `pos` and the number of bytes it spans.
  util::Expected<std::pair<Token, std::size_t>> lex_token(std::size_t pos) const {
    const char c = m_text[pos];
    std::size_t i = pos;
    if (is_name_start(c)) {
      while (i < m_text.size() && (is_name_start(m_text[i]) || is_digit(m_text[i]))) {
        ++i;
      }
      return std::pair{Token{TokenKind::name, std::string(m_text.substr(pos, i - pos)), pos},
                       i - pos};
    }
    // A minus sign only ever starts a negative number: there is no arithmetic.
    const bool negative = c == '-' && pos + 1 < m_text.size() && is_digit(m_text[pos + 1]);
    if (is_digit(c) || negative) {
      i += negative ? 1 : 0;
      while (i < m_text.size() && is_digit(m_text[i])) {
        ++i;
      }
      TokenKind kind = TokenKind::integer;
      if (i + 1 < m_text.size() && m_text[i] == '.' && is_digit(m_text[i + 1])) {
        kind = TokenKind::floating;
        ++i;
        while (i < m_text.size() && is_digit(m_text[i])) {
          ++i;
        }
      }
      return std::pair{Token{kind, std::string(m_text.substr(pos, i - pos)), pos}, i - pos};
    }
    if (c == '\'' || c == '"') {
      return lex_string(pos);
    }
    for (std::string_view symbol : {"==", "!="}) {
      if (m_text.substr(pos, 2) == symbol) {
        return std::pair{Token{TokenKind::symbol, std::string(symbol), pos}, std::size_t{2}};
      }
    }
    if (std::string_view("()[].,|~").find(c) != std::string_view::npos) {
      return std::pair{Token{TokenKind::symbol, std::string(1, c), pos}, std::size_t{1}};
    }
    return m_source.fail_at(pos, fmt::format("unexpected character \"{}\"", c));
  }

  util::Expected<std::pair<Token, std::size_t>> lex_string(std::size_t pos) const {
    const char quote = m_text[pos];
    std::string value;
    for (std::size_t i = pos + 1; i < m_text.size(); ++i) {
      const char c = m_text[i];
      if (c == quote) {
        return std::pair{Token{TokenKind::string, std::move(value), pos}, i + 1 - pos};
      }
      if (c == '\\' && i + 1 < m_text.size()) {
        const char escaped = m_text[++i];
        switch (escaped) {
          case 'n': value += '\n'; break;
          case 't': value += '\t'; break;
          case 'r': value += '\r'; break;
          default: value += escaped; break;  // \\, \', \" and anything else stand for themselves
        }
        continue;
      }
      value += c;
    }
    return m_source.fail_at(pos, "unterminated string");
  }

  const TemplateSource& m_source;
  std::string_view m_text;
};

// Finds the next `{{`, `{%` or `{#` at or after `pos`.
std::size_t find_tag(std::string_view text, std::size_t pos) {
  while (true) {
    pos = text.find('{', pos);
    if (pos == std::string_view::npos || pos + 1 >= text.size()) {
      return std::string_view::npos;
    }
    const char next = text[pos + 1];
    if (next == '{' || next == '%' || next == '#') {
      return pos;
    }
    ++pos;
  }
}

// If a `{% keyword %}` tag (with optional `-` markers) starts at `pos`, returns its end.
std::size_t match_simple_block(std::string_view text, std::size_t pos, std::string_view keyword,
                               bool& strip_before, bool& strip_after) {
  if (text.substr(pos, 2) != "{%") {
    return std::string_view::npos;
  }
  std::size_t i = pos + 2;
  strip_before = i < text.size() && text[i] == '-';
  i += strip_before ? 1 : 0;
  while (i < text.size() && is_space(text[i])) {
    ++i;
  }
  if (text.substr(i, keyword.size()) != keyword) {
    return std::string_view::npos;
  }
  i += keyword.size();
  if (i < text.size() && (is_name_start(text[i]) || is_digit(text[i]))) {
    return std::string_view::npos;  // `{% rawish %}` is another word
  }
  while (i < text.size() && is_space(text[i])) {
    ++i;
  }
  strip_after = i < text.size() && text[i] == '-';
  i += strip_after ? 1 : 0;
  return text.substr(i, 2) == "%}" ? i + 2 : std::string_view::npos;
}

// Splits `text` into items; whitespace is not yet adjusted.
util::Expected<std::vector<Item>> split_items(const TemplateSource& source, std::string_view text) {
  std::vector<Item> items;
  TagLexer lexer(source, text);
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t tag = find_tag(text, pos);
    if (tag == std::string_view::npos) {
      items.push_back(Item{ItemKind::text, std::string(text.substr(pos)), {}, pos});
      break;
    }
    if (tag > pos) {
      items.push_back(Item{ItemKind::text, std::string(text.substr(pos, tag - pos)), {}, pos});
    }
    Item item;
    item.offset = tag;
    const char kind = text[tag + 1];
    item.strip_before = tag + 2 < text.size() && text[tag + 2] == '-';
    const std::size_t body = tag + 2 + (item.strip_before ? 1 : 0);
    if (kind == '#') {
      const std::size_t close = text.find("#}", body);
      if (close == std::string_view::npos) {
        return source.fail_at(tag, "unclosed comment: missing \"#}\"");
      }
      item.kind = ItemKind::comment;
      item.strip_after = close > body && text[close - 1] == '-';
      items.push_back(std::move(item));
      pos = close + 2;
      continue;
    }
    bool raw_strip_before = false;
    bool raw_strip_after = false;
    const std::size_t raw_end = match_simple_block(text, tag, "raw", raw_strip_before,
                                                   raw_strip_after);
    if (raw_end != std::string_view::npos) {
      // Everything up to the matching {% endraw %} is text, tags included.
      std::size_t search = raw_end;
      while (true) {
        const std::size_t candidate = text.find("{%", search);
        if (candidate == std::string_view::npos) {
          return source.fail_at(tag, "unclosed \"raw\" block: missing {% endraw %}");
        }
        bool end_strip_before = false;
        bool end_strip_after = false;
        const std::size_t end = match_simple_block(text, candidate, "endraw", end_strip_before,
                                                   end_strip_after);
        if (end == std::string_view::npos) {
          search = candidate + 2;
          continue;
        }
        items.push_back(Item{ItemKind::raw_begin, "", {}, tag, raw_strip_before, raw_strip_after});
        if (candidate > raw_end) {
          items.push_back(Item{ItemKind::text,
                               std::string(text.substr(raw_end, candidate - raw_end)), {},
                               raw_end});
        }
        items.push_back(Item{ItemKind::raw_end, "", {}, candidate, end_strip_before,
                             end_strip_after});
        pos = end;
        break;
      }
      continue;
    }
    item.kind = kind == '{' ? ItemKind::output : ItemKind::statement;
    std::size_t end = 0;
    item.tokens = KH_TRY(lexer.lex(tag, body, kind == '{' ? "}}" : "%}", end, item.strip_after));
    items.push_back(std::move(item));
    pos = end;
  }
  return items;
}

bool is_block_like(ItemKind kind) {
  return kind == ItemKind::statement || kind == ItemKind::comment ||
         kind == ItemKind::raw_begin || kind == ItemKind::raw_end;
}

// Applies `-` markers, trim_blocks and lstrip_blocks to the text items in place.
void adjust_whitespace(std::vector<Item>& items, const TemplateOptions& options) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].kind != ItemKind::text) {
      continue;
    }
    std::string& text = items[i].text;
    const Item* previous = i > 0 ? &items[i - 1] : nullptr;
    const Item* next = i + 1 < items.size() ? &items[i + 1] : nullptr;
    bool at_line_start = previous == nullptr;
    if (previous != nullptr && previous->strip_after) {
      const auto first = std::find_if(text.begin(), text.end(), [](char c) { return !is_space(c); });
      text.erase(text.begin(), first);
    } else if (previous != nullptr && is_block_like(previous->kind) &&
               previous->kind != ItemKind::raw_begin) {
      // trim_blocks; Jinja keeps the newline right after {% raw %}, as raw content is verbatim.
      if (text.starts_with("\r\n")) {
        text.erase(0, 2);
        at_line_start = true;
      } else if (text.starts_with("\n")) {
        text.erase(0, 1);
        at_line_start = true;
      }
    }
    if (next != nullptr && next->strip_before) {
      const auto last = std::find_if(text.rbegin(), text.rend(), [](char c) { return !is_space(c); });
      text.erase(last.base(), text.end());
    } else if (next != nullptr && options.lstrip_blocks == LstripBlocks::yes &&
               is_block_like(next->kind)) {
      const std::size_t newline = text.rfind('\n');
      const std::size_t tail = newline == std::string::npos ? 0 : newline + 1;
      const bool only_blanks = text.find_first_not_of(" \t", tail) == std::string::npos;
      if (only_blanks && (newline != std::string::npos || at_line_start)) {
        text.erase(tail);
      }
    }
  }
}

}  // namespace

util::Expected<std::vector<Piece>> lex_template(const TemplateSource& source,
                                                const TemplateOptions& options) {
  std::string_view text = source.text();
  if (options.trailing_newline == TrailingNewline::strip) {
    if (text.ends_with("\r\n")) {
      text.remove_suffix(2);
    } else if (text.ends_with('\n')) {
      text.remove_suffix(1);
    }
  }
  auto items = KH_TRY(split_items(source, text));
  adjust_whitespace(items, options);

  std::vector<Piece> pieces;
  for (auto& item : items) {
    switch (item.kind) {
      case ItemKind::text:
        if (!item.text.empty()) {
          pieces.push_back(Piece{PieceKind::text, std::move(item.text), {}, item.offset});
        }
        break;
      case ItemKind::output:
        pieces.push_back(Piece{PieceKind::output, "", std::move(item.tokens), item.offset});
        break;
      case ItemKind::statement:
        pieces.push_back(Piece{PieceKind::statement, "", std::move(item.tokens), item.offset});
        break;
      case ItemKind::comment:
      case ItemKind::raw_begin:
      case ItemKind::raw_end:
        break;
    }
  }
  return pieces;
}

}  // namespace kernelhub::codegen::detail
