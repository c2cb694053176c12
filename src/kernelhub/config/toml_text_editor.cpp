// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/config/toml_text_editor.hpp>

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace kernelhub::config {

namespace {

constexpr std::uint32_t k_no_line = std::numeric_limits<std::uint32_t>::max();

// Bytes in the UTF-8 sequence that starts with `lead`: toml++ counts columns in code points.
std::size_t utf8_length(unsigned char lead) {
  if ((lead & 0xE0U) == 0xC0U) {
    return 2;
  }
  if ((lead & 0xF0U) == 0xE0U) {
    return 3;
  }
  if ((lead & 0xF8U) == 0xF0U) {
    return 4;
  }
  return 1;
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) {
    return {};
  }
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// The entry `key` of `table`, or nulls when absent.
std::pair<const toml::key*, const toml::node*> entry(const toml::table& table,
                                                     std::string_view key) {
  for (auto&& [name, node] : table) {
    if (name.str() == key) {
      return {&name, &node};
    }
  }
  return {nullptr, nullptr};
}

bool is_section_table(const toml::node& node) {
  return node.is_table() && !node.as_table()->is_inline();
}

}  // namespace

TomlTextEditor::TomlTextEditor(std::string_view text, const toml::table& root)
    : m_text(text), m_eol(text.find("\r\n") != std::string_view::npos ? "\r\n" : "\n") {
  m_line_begins.push_back(0);
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      m_line_begins.push_back(i + 1);
    }
  }
  collect_headers(root);
  std::sort(m_header_lines.begin(), m_header_lines.end());
  if (const auto* kernels = root.get("kernel"); kernels != nullptr && kernels->is_table()) {
    if (is_header_at(kernels->source().begin)) {
      m_kernel_header_lines.push_back(kernels->source().begin.line);
    }
    for (auto&& [name, kernel] : *kernels->as_table()) {
      if (is_header_at(kernel.source().begin)) {
        m_kernel_header_lines.push_back(kernel.source().begin.line);
      }
    }
  }
}

void TomlTextEditor::collect_headers(const toml::table& table) {
  for (auto&& [name, node] : table) {
    if (is_section_table(node)) {
      if (is_header_at(node.source().begin)) {
        m_header_lines.push_back(node.source().begin.line);
      }
      collect_headers(*node.as_table());
    } else if (const auto* array = node.as_array();
               array != nullptr && array->is_array_of_tables()) {
      for (const auto& element : *array) {
        if (is_header_at(element.source().begin)) {
          m_header_lines.push_back(element.source().begin.line);
        }
        collect_headers(*element.as_table());
      }
    }
  }
}

std::size_t TomlTextEditor::line_begin(std::uint32_t line) const {
  if (line == 0 || line > m_line_begins.size()) {
    return m_text.size();
  }
  return m_line_begins[line - 1];
}

std::size_t TomlTextEditor::next_line_begin(std::uint32_t line) const {
  return line < m_line_begins.size() ? m_line_begins[line] : m_text.size();
}

std::string_view TomlTextEditor::line(std::uint32_t line) const {
  const auto begin = line_begin(line);
  auto text = m_text.substr(begin, next_line_begin(line) - begin);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

std::size_t TomlTextEditor::offset(const toml::source_position& position) const {
  auto at = line_begin(position.line);
  for (std::uint32_t column = 1; column < position.column; ++column) {
    if (at >= m_text.size() || m_text[at] == '\n') {
      break;
    }
    at += utf8_length(static_cast<unsigned char>(m_text[at]));
  }
  return std::min(at, m_text.size());
}

bool TomlTextEditor::is_header_at(const toml::source_position& position) const {
  const auto at = offset(position);
  return position && at < m_text.size() && m_text[at] == '[';
}

std::uint32_t TomlTextEditor::next_header_line(std::uint32_t after) const {
  const auto next = std::upper_bound(m_header_lines.begin(), m_header_lines.end(), after);
  return next == m_header_lines.end() ? k_no_line : *next;
}

// A table created implicitly by `[a.b]` carries the region of that child header, so a header
// only belongs to `table` when some plain entry of `table` sits in the section under it.
bool TomlTextEditor::owns_header(const toml::table& table) const {
  if (table.is_inline() || !is_header_at(table.source().begin)) {
    return false;
  }
  const auto header = table.source().begin.line;
  const auto next = next_header_line(header);
  return std::any_of(table.begin(), table.end(), [&](const auto& item) {
    const auto key_line = item.first.source().begin.line;
    return !is_section_table(item.second) && key_line > header && key_line < next;
  });
}

bool TomlTextEditor::insert_after(const toml::table& table, std::string_view anchor,
                                  std::string_view key, std::string_view value) {
  const auto [anchor_key, anchor_value] = entry(table, anchor);
  if (anchor_key == nullptr || is_section_table(*anchor_value)) {
    return false;
  }
  if (table.is_inline()) {
    m_edits.push_back({offset(anchor_value->source().end), offset(anchor_value->source().end),
                       fmt::format(", {} = {}", key, value)});
    return true;
  }
  // The text before the anchor's key is its indentation or, for `general.version = 1`
  // written outside [general], the dotted prefix: the new key needs the same.
  const auto key_line = anchor_key->source().begin.line;
  const auto prefix = m_text.substr(line_begin(key_line),
                                    offset(anchor_key->source().begin) - line_begin(key_line));
  const auto at = next_line_begin(anchor_value->source().end.line);
  const bool needs_newline = at == m_text.size() && !m_text.empty() && m_text.back() != '\n';
  m_edits.push_back({at, at,
                     fmt::format("{}{}{} = {}{}", needs_newline ? m_eol : "", prefix, key, value,
                                 needs_newline ? "" : m_eol)});
  return true;
}

bool TomlTextEditor::insert_first(const toml::table& table, std::string_view key,
                                  std::string_view value) {
  if (!owns_header(table)) {
    return false;
  }
  const auto at = next_line_begin(table.source().begin.line);
  const bool needs_newline = at == m_text.size() && m_text.back() != '\n';
  m_edits.push_back({at, at,
                     fmt::format("{}{} = {}{}", needs_newline ? m_eol : "", key, value,
                                 needs_newline ? "" : m_eol)});
  return true;
}

bool TomlTextEditor::remove(const toml::table& table, std::string_view key) {
  const auto [found_key, found_value] = entry(table, key);
  if (found_key == nullptr || table.is_inline() || is_section_table(*found_value)) {
    return false;
  }
  m_edits.push_back({line_begin(found_key->source().begin.line),
                     next_line_begin(found_value->source().end.line),
                     {}});
  return true;
}

bool TomlTextEditor::replace_value(const toml::table& table, std::string_view key,
                                   std::string_view value) {
  const auto [found_key, found_value] = entry(table, key);
  if (found_key == nullptr || is_section_table(*found_value)) {
    return false;
  }
  m_edits.push_back(
      {offset(found_value->source().begin), offset(found_value->source().end), std::string(value)});
  return true;
}

bool TomlTextEditor::replace_entry(const toml::table& table, std::string_view key,
                                   std::string_view new_key, std::string_view value) {
  const auto [found_key, found_value] = entry(table, key);
  if (found_key == nullptr || table.is_inline() || is_section_table(*found_value)) {
    return false;
  }
  m_edits.push_back({offset(found_key->source().begin), offset(found_value->source().end),
                     fmt::format("{} = {}", new_key, value)});
  return true;
}

bool TomlTextEditor::rename_header(const toml::table& table, std::string_view old_name,
                                   std::string_view new_name) {
  if (!owns_header(table)) {
    return false;
  }
  const auto begin = offset(table.source().begin);
  const auto end = offset(table.source().end);
  auto header = m_text.substr(begin, end - begin);
  if (header.size() < 2 || header.back() != ']' ||
      trim(header.substr(1, header.size() - 2)) != old_name) {
    return false;
  }
  m_edits.push_back({begin, end, fmt::format("[{}]", new_name)});
  return true;
}

void TomlTextEditor::insert_table_before_line(std::uint32_t line_number, std::string_view name,
                                              const TomlEntries& entries) {
  std::string body = fmt::format("[{}]{}", name, m_eol);
  for (const auto& [key, value] : entries) {
    body += fmt::format("{} = {}{}", key, value, m_eol);
  }
  if (line_number == k_no_line) {
    // End the last line if needed, then leave one blank line before the new header.
    std::string lead;
    if (!m_text.empty() && m_text.back() != '\n') {
      lead = m_eol + m_eol;
    } else if (m_line_begins.size() >= 2 &&
               !trim(line(static_cast<std::uint32_t>(m_line_begins.size() - 1))).empty()) {
      lead = m_eol;
    }
    m_edits.push_back({m_text.size(), m_text.size(), lead + body});
    return;
  }
  // Comment lines directly above a header describe it: the new table goes above them.
  while (line_number > 1 && trim(line(line_number - 1)).starts_with('#')) {
    --line_number;
  }
  const bool gap_above = line_number == 1 || trim(line(line_number - 1)).empty();
  const auto at = line_begin(line_number);
  m_edits.push_back({at, at, (gap_above ? "" : m_eol) + body + m_eol});
}

bool TomlTextEditor::insert_table_after(const toml::table& table, std::string_view name,
                                        const TomlEntries& entries) {
  if (!owns_header(table)) {
    return false;
  }
  insert_table_before_line(next_header_line(table.source().begin.line), name, entries);
  return true;
}

void TomlTextEditor::insert_table_before_kernels(std::string_view name,
                                                 const TomlEntries& entries) {
  const auto first = std::min_element(m_kernel_header_lines.begin(), m_kernel_header_lines.end());
  insert_table_before_line(first == m_kernel_header_lines.end() ? k_no_line : *first, name,
                           entries);
}

std::string TomlTextEditor::value_text(const toml::table& table, std::string_view key) const {
  const auto [found_key, found_value] = entry(table, key);
  if (found_value == nullptr) {
    return {};
  }
  const auto begin = offset(found_value->source().begin);
  return std::string(m_text.substr(begin, offset(found_value->source().end) - begin));
}

std::optional<std::string> TomlTextEditor::result() const {
  auto edits = m_edits;
  // Insertions at an offset come before a removal starting there; equal edits keep their order.
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
    return std::pair(a.begin, a.end) < std::pair(b.begin, b.end);
  });
  std::string out;
  std::size_t at = 0;
  for (const auto& edit : edits) {
    if (edit.begin < at) {
      return std::nullopt;
    }
    out.append(m_text.substr(at, edit.begin - at));
    out += edit.text;
    at = edit.end;
  }
  out.append(m_text.substr(at));
  return out;
}

}  // namespace kernelhub::config
