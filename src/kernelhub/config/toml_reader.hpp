// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include <kernelhub/config/build_config.hpp>
#include <kernelhub/types/version.hpp>
#include <kernelhub/util/diagnostic.hpp>

// Typed, located reads from a toml++ tree, shared by the edition readers. Every problem becomes a
// diagnostic at the offending key or value (toml++ keeps a source region on each), and every key
// read is recorded in the SourceMap, so later stages can point at it too. Internal to the config
// layer: nothing outside it sees toml++ types.
namespace kernelhub::config::detail {

enum class Need { optional, required };

// The state of one read of one file: where diagnostics go and which keys were seen.
class ReadContext {
 public:
  ReadContext(std::string_view text, std::string file_name, util::DiagnosticSink& sink,
              SourceMap& locations);

  util::SourceLocation locate(const toml::source_region& region) const;
  util::SourceLocation start_of_file() const;
  void report(util::Severity severity, util::SourceLocation location, std::string message,
              std::string hint = {});
  void error(const toml::source_region& region, std::string message, std::string hint = {});
  void warning(const toml::source_region& region, std::string message, std::string hint = {});
  // Records where `path` ("general.backends") was written.
  void remember(const std::string& path, const toml::source_region& region);
  // Where `path` was written, or the start of the file when it was not.
  util::SourceLocation where(const std::string& path) const;
  std::size_t error_count() const { return m_errors; }

 private:
  std::string_view m_text;
  std::string m_file;
  util::DiagnosticSink& m_sink;
  SourceMap& m_locations;
  std::size_t m_errors = 0;
};

// "a string", "an integer", ...: the TOML type of `node`, for messages.
std::string_view describe_type(const toml::node& node);
// The type and, for a string, integer or boolean, the value: "a string \"1\"", "an integer 12".
std::string describe_value(const toml::node& node);

// Value readers: each reports a type error at `node` (named `path` in the message) and returns
// nullopt when the node does not hold the expected type.
std::optional<std::string> read_string(ReadContext& ctx, const toml::node& node,
                                       const std::string& path);
std::optional<std::uint64_t> read_count(ReadContext& ctx, const toml::node& node,
                                        const std::string& path);
std::optional<bool> read_bool(ReadContext& ctx, const toml::node& node, const std::string& path);
std::optional<std::vector<std::string>> read_strings(ReadContext& ctx, const toml::node& node,
                                                     const std::string& path);
// A "major.minor" version, as every version field of build.toml is (the reference's
// `Version<2>`): surrounding blanks are ignored and each part is an unsigned decimal number.
std::optional<types::Version> read_version(ReadContext& ctx, const toml::node& node,
                                           const std::string& path);

// Reads one TOML table key by key. Each accessor marks its key as valid for this table (so the
// keys asked for, present or not, are the "did you mean" candidates) and records its location;
// `finish` then reports every key nobody asked for.
class TableReader {
 public:
  // `path` is the dotted path of the table ("" for the root, "general", "kernel.relu").
  TableReader(ReadContext& ctx, const toml::table& table, std::string path);

  ReadContext& context() { return m_ctx; }
  const toml::table& table() const { return m_table; }
  const std::string& path() const { return m_path; }
  std::string path_of(std::string_view key) const;
  // "[general]", or "the top level" for the root table, for messages.
  std::string display_name() const;

  // The raw node of `key` (reporting it when required and absent).
  const toml::node* get(std::string_view key, Need need = Need::optional);
  std::optional<std::string> string(std::string_view key, Need need = Need::optional);
  std::optional<std::uint64_t> count(std::string_view key, Need need = Need::optional);
  std::optional<bool> boolean(std::string_view key, Need need = Need::optional);
  std::optional<std::vector<std::string>> strings(std::string_view key, Need need = Need::optional);
  std::optional<types::Version> version(std::string_view key, Need need = Need::optional);
  // A sub-table; reports a type error when `key` holds something else.
  const toml::table* subtable(std::string_view key, Need need = Need::optional);

  // Marks keys valid without reading them (their value is checked elsewhere).
  void accept(std::string_view key);
  bool has(std::string_view key) const { return m_table.contains(key); }

  // Reports each key that was never asked for. `explain` may report a more specific
  // diagnostic for a key (and return true) instead of the generic "unknown key".
  using Explainer = std::function<bool(std::string_view key, const toml::key& where)>;
  void finish(const Explainer& explain = {});

 private:
  void missing(std::string_view key);
  void report_missing(std::string_view key, bool misspelt);

  ReadContext& m_ctx;
  const toml::table& m_table;
  std::string m_path;
  std::vector<std::string> m_known;
  std::vector<std::string> m_missing;
};

// "did you mean \"x\"?" when `word` is close to one of `choices`, else the list of choices.
std::string choice_hint(std::string_view word, std::span<const std::string_view> choices);

// Sorted by where they were written: toml++ keeps tables as sorted maps, the reference keeps
// file order for kernels.
std::vector<std::pair<const toml::key*, const toml::node*>> entries_in_file_order(
    const toml::table& table);

}  // namespace kernelhub::config::detail
