// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/config/toml_reader.hpp>

#include <algorithm>
#include <array>
#include <charconv>

#include <fmt/format.h>

#include <kernelhub/util/did_you_mean.hpp>

namespace kernelhub::config::detail {

ReadContext::ReadContext(std::string_view text, std::string file_name, util::DiagnosticSink& sink,
                         SourceMap& locations)
    : m_text(text), m_file(std::move(file_name)), m_sink(sink), m_locations(locations) {}

util::SourceLocation ReadContext::locate(const toml::source_region& region) const {
  if (region.begin.line == 0) {
    return start_of_file();
  }
  return {m_file, region.begin.line, std::max<std::uint32_t>(region.begin.column, 1)};
}

util::SourceLocation ReadContext::start_of_file() const { return {m_file, 1, 1}; }

void ReadContext::report(util::Severity severity, util::SourceLocation location,
                         std::string message, std::string hint) {
  if (severity == util::Severity::error) {
    ++m_errors;
  }
  auto line = std::string(util::line_of(m_text, location.line));
  m_sink.report(util::Diagnostic{severity, std::move(location), std::move(message),
                                 std::move(hint), std::move(line)});
}

void ReadContext::error(const toml::source_region& region, std::string message, std::string hint) {
  report(util::Severity::error, locate(region), std::move(message), std::move(hint));
}

void ReadContext::warning(const toml::source_region& region, std::string message,
                          std::string hint) {
  report(util::Severity::warning, locate(region), std::move(message), std::move(hint));
}

void ReadContext::remember(const std::string& path, const toml::source_region& region) {
  m_locations[path] = locate(region);
}

util::SourceLocation ReadContext::where(const std::string& path) const {
  const auto it = m_locations.find(path);
  return it == m_locations.end() ? start_of_file() : it->second;
}

std::string_view describe_type(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

// "a string \"1\"", "an integer 12", "an array": the type, and the value when it is short.
std::string describe_value(const toml::node& node) {
  if (const auto* s = node.as_string()) {
    return fmt::format("{} \"{}\"", describe_type(node), s->get());
  }
  if (const auto* i = node.as_integer()) {
    return fmt::format("{} {}", describe_type(node), i->get());
  }
  if (const auto* b = node.as_boolean()) {
    return fmt::format("{} {}", describe_type(node), b->get());
  }
  return std::string(describe_type(node));
}

namespace {

void type_error(ReadContext& ctx, const toml::node& node, const std::string& path,
                std::string_view expected) {
  ctx.error(node.source(), fmt::format("expected {} for \"{}\", found {}", expected, path,
                                       describe_value(node)));
}

std::string_view trim(std::string_view text) {
  constexpr std::string_view k_blanks = " \t\r\n\f\v";
  const auto first = text.find_first_not_of(k_blanks);
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = text.find_last_not_of(k_blanks);
  return text.substr(first, last - first + 1);
}

// One version part as Rust's `usize::from_str` reads it: an optional '+', then decimal digits.
std::optional<std::uint64_t> parse_part(std::string_view part) {
  if (!part.empty() && part.front() == '+') {
    part.remove_prefix(1);
  }
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
  if (part.empty() || error != std::errc() || end != part.data() + part.size()) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

std::optional<std::string> read_string(ReadContext& ctx, const toml::node& node,
                                       const std::string& path) {
  if (const auto* s = node.as_string()) {
    return s->get();
  }
  type_error(ctx, node, path, "a string");
  return std::nullopt;
}

std::optional<std::uint64_t> read_count(ReadContext& ctx, const toml::node& node,
                                        const std::string& path) {
  if (const auto* i = node.as_integer()) {
    if (i->get() >= 0) {
      return static_cast<std::uint64_t>(i->get());
    }
  }
  type_error(ctx, node, path, "a non-negative integer");
  return std::nullopt;
}

std::optional<bool> read_bool(ReadContext& ctx, const toml::node& node, const std::string& path) {
  if (const auto* b = node.as_boolean()) {
    return b->get();
  }
  type_error(ctx, node, path, "a boolean");
  return std::nullopt;
}

std::optional<std::vector<std::string>> read_strings(ReadContext& ctx, const toml::node& node,
                                                     const std::string& path) {
  const auto* array = node.as_array();
  if (array == nullptr) {
    type_error(ctx, node, path, "an array of strings");
    return std::nullopt;
  }
  std::vector<std::string> values;
  bool ok = true;
  for (std::size_t i = 0; i < array->size(); ++i) {
    const auto element_path = fmt::format("{}[{}]", path, i);
    const auto& element = *array->get(i);
    ctx.remember(element_path, element.source());
    if (auto value = read_string(ctx, element, element_path)) {
      values.push_back(std::move(*value));
    } else {
      ok = false;
    }
  }
  if (!ok) {
    return std::nullopt;
  }
  return values;
}

std::optional<types::Version> read_version(ReadContext& ctx, const toml::node& node,
                                           const std::string& path) {
  const auto text = read_string(ctx, node, path);
  if (!text) {
    return std::nullopt;
  }
  const auto trimmed = trim(*text);
  if (trimmed.empty()) {
    ctx.error(node.source(), fmt::format("empty version for \"{}\"", path),
              "write a \"major.minor\" version such as \"2.9\"");
    return std::nullopt;
  }
  std::vector<std::uint64_t> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = trimmed.find('.', start);
    const auto part = parse_part(trimmed.substr(start, dot == std::string_view::npos
                                                           ? std::string_view::npos
                                                           : dot - start));
    if (!part) {
      ctx.error(node.source(),
                fmt::format("invalid version \"{}\" for \"{}\": each part must be a number",
                            *text, path));
      return std::nullopt;
    }
    parts.push_back(*part);
    if (dot == std::string_view::npos) {
      break;
    }
    start = dot + 1;
  }
  if (parts.size() != 2) {
    ctx.error(node.source(),
              fmt::format("version \"{}\" for \"{}\" has {} part{}, expected 2 (major.minor)",
                          *text, path, parts.size(), parts.size() == 1 ? "" : "s"),
              parts.size() == 1 ? fmt::format("write \"{}.0\"", parts[0])
                                : fmt::format("write \"{}.{}\"", parts[0], parts[1]));
    return std::nullopt;
  }
  return types::Version(std::move(parts));
}

TableReader::TableReader(ReadContext& ctx, const toml::table& table, std::string path)
    : m_ctx(ctx), m_table(table), m_path(std::move(path)) {}

std::string TableReader::path_of(std::string_view key) const {
  return m_path.empty() ? std::string(key) : fmt::format("{}.{}", m_path, key);
}

std::string TableReader::display_name() const {
  if (m_path.empty()) {
    return "the top level";
  }
  if (m_path.find('[') != std::string::npos) {
    return fmt::format("\"{}\"", m_path);
  }
  return fmt::format("[{}]", m_path);
}

void TableReader::accept(std::string_view key) {
  if (std::find(m_known.begin(), m_known.end(), key) == m_known.end()) {
    m_known.emplace_back(key);
  }
}

void TableReader::missing(std::string_view key) {
  // Reported by `finish`: by then every valid key is known, so a misspelling of this key among
  // the unknown ones can be reported once, as the misspelling.
  m_missing.emplace_back(key);
}

void TableReader::report_missing(std::string_view key, bool misspelt) {
  if (misspelt) {
    return;
  }
  const auto location = m_path.empty() ? m_ctx.start_of_file() : m_ctx.locate(m_table.source());
  m_ctx.report(util::Severity::error, location,
               m_path.empty()
                   ? fmt::format("missing table [{}]", key)
                   : fmt::format("missing required key \"{}\" in {}", key, display_name()));
}

const toml::node* TableReader::get(std::string_view key, Need need) {
  accept(key);
  const auto it = m_table.find(key);
  if (it == m_table.end()) {
    if (need == Need::required) {
      missing(key);
    }
    return nullptr;
  }
  // A table written as a [header] is best pointed at by its header, anything else by its key.
  const auto* table = it->second.as_table();
  const bool header = table != nullptr && !table->is_inline();
  m_ctx.remember(path_of(key), header ? table->source() : it->first.source());
  return &it->second;
}

std::optional<std::string> TableReader::string(std::string_view key, Need need) {
  const auto* node = get(key, need);
  return node != nullptr ? read_string(m_ctx, *node, path_of(key)) : std::nullopt;
}

std::optional<std::uint64_t> TableReader::count(std::string_view key, Need need) {
  const auto* node = get(key, need);
  return node != nullptr ? read_count(m_ctx, *node, path_of(key)) : std::nullopt;
}

std::optional<bool> TableReader::boolean(std::string_view key, Need need) {
  const auto* node = get(key, need);
  return node != nullptr ? read_bool(m_ctx, *node, path_of(key)) : std::nullopt;
}

std::optional<std::vector<std::string>> TableReader::strings(std::string_view key, Need need) {
  const auto* node = get(key, need);
  return node != nullptr ? read_strings(m_ctx, *node, path_of(key)) : std::nullopt;
}

std::optional<types::Version> TableReader::version(std::string_view key, Need need) {
  const auto* node = get(key, need);
  return node != nullptr ? read_version(m_ctx, *node, path_of(key)) : std::nullopt;
}

const toml::table* TableReader::subtable(std::string_view key, Need need) {
  const auto* node = get(key, need);
  if (node == nullptr) {
    return nullptr;
  }
  if (const auto* table = node->as_table()) {
    return table;
  }
  type_error(m_ctx, *node, path_of(key), "a table");
  return nullptr;
}

void TableReader::finish(const Explainer& explain) {
  std::vector<std::string_view> candidates(m_known.begin(), m_known.end());
  std::vector<std::string_view> unknown;
  for (const auto& [key, node] : m_table) {
    if (std::find(m_known.begin(), m_known.end(), key.str()) == m_known.end()) {
      unknown.push_back(key.str());
    }
  }
  for (const auto& key : m_missing) {
    const std::array<std::string_view, 1> wanted = {key};
    report_missing(key, std::any_of(unknown.begin(), unknown.end(), [&](std::string_view u) {
                     return util::closest_match(u, wanted).has_value();
                   }));
  }
  for (const auto& [key, node] : m_table) {
    if (std::find(m_known.begin(), m_known.end(), key.str()) != m_known.end()) {
      continue;
    }
    if (explain && explain(key.str(), key)) {
      continue;
    }
    // A [header] table is reported at its header, as a table.
    const auto* table = node.as_table();
    const bool header = table != nullptr && !table->is_inline();
    std::string message;
    if (header) {
      message = fmt::format("unknown table [{}]", path_of(key.str()));
    } else if (m_path.empty()) {
      message = fmt::format("unknown top-level key \"{}\"", key.str());
    } else {
      message = fmt::format("unknown key \"{}\" in {}", key.str(), display_name());
    }
    m_ctx.error(header ? table->source() : key.source(), std::move(message),
                util::did_you_mean(key.str(), candidates));
  }
}

std::string choice_hint(std::string_view word, std::span<const std::string_view> choices) {
  auto hint = util::did_you_mean(word, choices);
  if (hint.empty()) {
    hint = fmt::format("expected one of: {}", fmt::join(choices, ", "));
  }
  return hint;
}

std::vector<std::pair<const toml::key*, const toml::node*>> entries_in_file_order(
    const toml::table& table) {
  std::vector<std::pair<const toml::key*, const toml::node*>> entries;
  for (const auto& [key, node] : table) {
    entries.emplace_back(&key, &node);
  }
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    const auto& pa = a.first->source().begin;
    const auto& pb = b.first->source().begin;
    return std::tie(pa.line, pa.column) < std::tie(pb.line, pb.column);
  });
  return entries;
}

}  // namespace kernelhub::config::detail
