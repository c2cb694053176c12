// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

// Edits TOML source text at the positions toml++ recorded while parsing it, so whatever an
// edit does not touch (comments, blank lines, key order, quoting, array layout) stays
// byte-identical. Operations record edits against the original text; `result()` applies them.
// An operation returns false when the table is written in a form it cannot edit safely (an
// inline table where a line is needed, a table without its own [header]); the caller then
// re-serialises instead. Used by edition_upgrade.cpp.
namespace kernelhub::config {

// `key = value` pairs, values already formatted as TOML.
using TomlEntries = std::vector<std::pair<std::string, std::string>>;

class TomlTextEditor {
 public:
  // `root` must have been parsed from `text`, which must outlive the editor.
  TomlTextEditor(std::string_view text, const toml::table& root);

  // Adds `key = value` right after entry `anchor` of `table`: on a new line with the anchor's
  // indentation (or dotted prefix), or after a comma inside an inline table.
  bool insert_after(const toml::table& table, std::string_view anchor, std::string_view key,
                    std::string_view value);
  // Adds `key = value` as the first line under `table`'s own [header].
  bool insert_first(const toml::table& table, std::string_view key, std::string_view value);
  // Removes entry `key` of `table` with the whole lines it occupies (comments on them too).
  bool remove(const toml::table& table, std::string_view key);
  // Replaces the value of entry `key` of `table` by `value` (already TOML).
  bool replace_value(const toml::table& table, std::string_view key, std::string_view value);
  // Replaces entry `key` of `table` by `new_key = value` in place (a trailing comment stays).
  bool replace_entry(const toml::table& table, std::string_view key, std::string_view new_key,
                     std::string_view value);
  // Replaces `table`'s header `[old_name]` by `[new_name]`.
  bool rename_header(const toml::table& table, std::string_view old_name,
                     std::string_view new_name);
  // A new table `[name]` after the section of `table`: before the next header (and the
  // comment lines directly above it) or at the end of the text.
  bool insert_table_after(const toml::table& table, std::string_view name,
                          const TomlEntries& entries);
  // A new table `[name]` before the first [kernel.*] header, or at the end of the text.
  void insert_table_before_kernels(std::string_view name, const TomlEntries& entries);

  // The verbatim source text of entry `key`'s value ("" when absent).
  std::string value_text(const toml::table& table, std::string_view key) const;

  // The edited text; nullopt when two recorded edits overlap.
  std::optional<std::string> result() const;

 private:
  struct Edit {
    std::size_t begin = 0;
    std::size_t end = 0;
    std::string text;
  };

  std::size_t offset(const toml::source_position& position) const;
  std::size_t line_begin(std::uint32_t line) const;
  std::size_t next_line_begin(std::uint32_t line) const;
  std::string_view line(std::uint32_t line) const;
  bool is_header_at(const toml::source_position& position) const;
  bool owns_header(const toml::table& table) const;
  std::uint32_t next_header_line(std::uint32_t after) const;
  void insert_table_before_line(std::uint32_t line, std::string_view name,
                                const TomlEntries& entries);
  void collect_headers(const toml::table& table);

  std::string_view m_text;
  std::string m_eol;
  std::vector<std::size_t> m_line_begins;
  std::vector<std::uint32_t> m_header_lines;  // sorted, lines holding a [table] header
  std::vector<std::uint32_t> m_kernel_header_lines;
  std::vector<Edit> m_edits;
};

}  // namespace kernelhub::config
