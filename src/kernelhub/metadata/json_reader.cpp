// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/metadata/json_reader.hpp>

#include <algorithm>

#include <fmt/format.h>

namespace kernelhub::metadata {

using nlohmann::json;

namespace {

bool is_plain_key(std::string_view key) {
  return !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_';
  });
}

// A short rendering of an offending value for messages.
std::string describe_value(const json& value) {
  auto text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 60) {
    text = text.substr(0, 57) + "...";
  }
  return value.is_null() ? "null" : fmt::format("{} {}", value.type_name(), text);
}

// nlohmann's messages start with "[json.exception.parse_error.101] parse error at line 1,
// column 2: "; the location goes into the diagnostic, the rest is the message.
std::string strip_exception_prefix(std::string message) {
  if (const auto bracket = message.find("] "); message.starts_with("[json.exception.") &&
                                               bracket != std::string::npos) {
    message.erase(0, bracket + 2);
  }
  if (const auto colon = message.find(": "); message.starts_with("parse error at line") &&
                                             colon != std::string::npos) {
    message.erase(0, colon + 2);
  }
  return message;
}

constexpr std::string_view k_replacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

int hex_digit(char c) {
  return (c >= '0' && c <= '9') ? c - '0'
         : (c >= 'a' && c <= 'f') ? c - 'a' + 10
         : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                  : -1;
}

// The code unit of the "\uXXXX" escape at `text[i]`, or -1.
int escape_unit(std::string_view text, std::size_t i) {
  if (i + 6 > text.size() || text[i] != '\\' || text[i + 1] != 'u') {
    return -1;
  }
  int unit = 0;
  for (std::size_t k = i + 2; k < i + 6; ++k) {
    const int digit = hex_digit(text[k]);
    if (digit < 0) {
      return -1;
    }
    unit = unit * 16 + digit;
  }
  return unit;
}

// Length of the valid UTF-8 sequence at `text[i]`, or 0.
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  const std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3
                             : (lead >> 3) == 0x1E                 ? 4
                                                                   : 0;
  if (length == 0 || i + length > text.size()) {
    return 0;
  }
  std::uint32_t cp = length == 1 ? lead : lead & (0x7Fu >> length);
  for (std::size_t k = 1; k < length; ++k) {
    const auto byte = static_cast<unsigned char>(text[i + k]);
    if ((byte & 0xC0) != 0x80) {
      return 0;
    }
    cp = (cp << 6) | (byte & 0x3F);
  }
  static constexpr std::uint32_t k_min[] = {0, 0, 0x80, 0x800, 0x10000};
  const bool valid = cp >= k_min[length] && cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF);
  return valid ? length : 0;
}

// serde_json skips the strings of keys it ignores without checking them, so invalid UTF-8 and
// lone surrogate escapes there are accepted; nlohmann rejects both anywhere. Inside strings,
// this replaces them with U+FFFD and says whether it did; string values and keys that are
// actually read are then checked for U+FFFD (see JsonReader::string).
bool replace_unchecked_string_content(std::string& text) {
  std::string out;
  bool replaced = false;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (!in_string) {
      in_string = c == '"';
      out += c;
      ++i;
      continue;
    }
    if (c == '"') {
      in_string = false;
      out += c;
      ++i;
    } else if (c == '\\' && i + 1 < text.size() && text[i + 1] == 'u') {
      const int unit = escape_unit(text, i);
      const int next = escape_unit(text, i + 6);
      const bool high = unit >= 0xD800 && unit <= 0xDBFF;
      const bool low = unit >= 0xDC00 && unit <= 0xDFFF;
      if (high && next >= 0xDC00 && next <= 0xDFFF) {
        out.append(text, i, 12);
        i += 12;
      } else if (high || low) {
        out += "\\uFFFD";
        replaced = true;
        i += 6;
      } else {
        out += c;
        ++i;
      }
    } else if (c == '\\') {
      out.append(text, i, std::min<std::size_t>(2, text.size() - i));
      i += 2;
    } else if (const auto length = utf8_length(text, i); length > 0) {
      out.append(text, i, length);
      i += length;
    } else {
      out += k_replacement;
      replaced = true;
      ++i;
    }
  }
  if (replaced) {
    text = std::move(out);
  }
  return replaced;
}

// Tracks where the parser is, to record every object's keys with repeats: nlohmann's DOM keeps
// only the last of repeated keys, which would hide the "duplicate field" serde reports.
class KeyRecorder {
 public:
  explicit KeyRecorder(std::map<std::string, std::vector<std::string>>& keys) : m_keys(keys) {}

  bool operator()(int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        m_stack.push_back({false, child_path(), {}, 0});
        m_keys[m_stack.back().path];
        break;
      case json::parse_event_t::array_start:
        m_stack.push_back({true, child_path(), {}, 0});
        break;
      case json::parse_event_t::key:
        m_stack.back().key = parsed.get<std::string>();
        m_keys[m_stack.back().path].push_back(m_stack.back().key);
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        m_stack.pop_back();
        advance();
        break;
      case json::parse_event_t::value:
        advance();
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool is_array;
    std::string path;
    std::string key;
    std::size_t index;
  };

  std::string child_path() const {
    if (m_stack.empty()) {
      return {};
    }
    const auto& top = m_stack.back();
    return top.is_array ? JsonReader::index_path(top.path, top.index)
                        : JsonReader::member_path(top.path, top.key);
  }
  void advance() {
    if (!m_stack.empty() && m_stack.back().is_array) {
      ++m_stack.back().index;
    }
  }

  std::map<std::string, std::vector<std::string>>& m_keys;
  std::vector<Frame> m_stack;
};

}  // namespace

JsonReader::JsonReader(std::string_view text, std::string file_name, util::DiagnosticSink& sink)
    : m_file_name(std::move(file_name)), m_sink(sink) {
  if (text.starts_with("\xEF\xBB\xBF")) {
    ++m_errors;
    m_sink.error({m_file_name, 1, 1}, "unexpected byte order mark", "save the file without a BOM");
    return;
  }
  std::string sanitized(text);
  m_replaced_content = replace_unchecked_string_content(sanitized);
  try {
    m_root = json::parse(sanitized, KeyRecorder(m_keys));
    m_parsed = true;
  } catch (const json::parse_error& e) {
    // `byte` is 1-based and points just past the offending character.
    const auto offset = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    const auto before = text.substr(0, offset);
    const auto line = static_cast<std::uint32_t>(std::count(before.begin(), before.end(), '\n') + 1);
    const auto line_start = before.rfind('\n');
    const auto column = static_cast<std::uint32_t>(
        offset - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1);
    ++m_errors;
    m_sink.report({util::Severity::error, {m_file_name, line, column},
                   "invalid JSON: " + strip_exception_prefix(e.what()), {},
                   std::string(util::line_of(text, line))});
  } catch (const json::exception& e) {
    ++m_errors;
    m_sink.error({m_file_name, 0, 0}, "invalid JSON: " + strip_exception_prefix(e.what()));
  }
}

void JsonReader::error(const std::string& path, std::string message, std::string hint) {
  ++m_errors;
  m_sink.error({m_file_name, 0, 0}, path.empty() ? message : fmt::format("{}: {}", path, message),
               std::move(hint));
}

void JsonReader::type_error(const json& value, const std::string& path, std::string_view expected) {
  error(path, fmt::format("expected {}, found {}", expected, describe_value(value)));
}

bool JsonReader::expect_object(const json& value, const std::string& path) {
  if (!value.is_object()) {
    type_error(value, path, "an object");
    return false;
  }
  // serde reads the keys of the objects it looks at, so they must be valid text.
  for (const auto& key : keys_at(path)) {
    if (!is_checked_text(key)) {
      error(path, fmt::format("invalid key {}: invalid UTF-8 or a lone surrogate escape",
                              json(key).dump()));
      return false;
    }
  }
  return true;
}

bool JsonReader::is_checked_text(std::string_view text) const {
  return !m_replaced_content || text.find(k_replacement) == std::string_view::npos;
}

const std::vector<std::string>& JsonReader::keys_at(const std::string& path) const {
  static const std::vector<std::string> k_none;
  const auto found = m_keys.find(path);
  return found == m_keys.end() ? k_none : found->second;
}

const json* JsonReader::member(const json& object, const std::string& path,
                               std::initializer_list<std::string_view> names, Field field) {
  const auto& keys = keys_at(path);
  const auto count = std::count_if(keys.begin(), keys.end(), [&](const std::string& key) {
    return std::find(names.begin(), names.end(), key) != names.end();
  });
  const auto primary = *names.begin();
  if (count > 1) {
    error(path, fmt::format("duplicate key \"{}\"", primary),
          names.size() > 1 ? fmt::format("\"{}\" is an alias of \"{}\"", *std::next(names.begin()), primary)
                           : std::string());
    return nullptr;
  }
  for (const auto name : names) {
    const auto found = object.find(name);
    if (found == object.end()) {
      continue;
    }
    if (found->is_null() && field == Field::optional) {
      return nullptr;
    }
    return &*found;
  }
  if (field == Field::required) {
    error(path, fmt::format("missing required key \"{}\"", primary));
  }
  return nullptr;
}

std::optional<std::string> JsonReader::string(const json& value, const std::string& path) {
  if (!value.is_string()) {
    type_error(value, path, "a string");
    return std::nullopt;
  }
  if (!is_checked_text(value.get_ref<const std::string&>())) {
    error(path, "invalid string: invalid UTF-8 or a lone surrogate escape");
    return std::nullopt;
  }
  return value.get<std::string>();
}

std::optional<std::uint64_t> JsonReader::unsigned_integer(const json& value,
                                                          const std::string& path) {
  // Only non-negative integer literals: "1.0", "1e2" and "-0" are floats or signed, as in serde.
  if (!value.is_number_unsigned()) {
    type_error(value, path, "a non-negative integer");
    return std::nullopt;
  }
  return value.get<std::uint64_t>();
}

std::optional<bool> JsonReader::boolean(const json& value, const std::string& path) {
  if (!value.is_boolean()) {
    type_error(value, path, "true or false");
    return std::nullopt;
  }
  return value.get<bool>();
}

std::optional<std::vector<std::string>> JsonReader::string_array(const json& value,
                                                                 const std::string& path) {
  if (!value.is_array()) {
    type_error(value, path, "an array of strings");
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool ok = true;
  for (std::size_t i = 0; i < value.size(); ++i) {
    auto item = string(value[i], index_path(path, i));
    ok = ok && item.has_value();
    if (item) {
      out.push_back(std::move(*item));
    }
  }
  return ok ? std::optional(std::move(out)) : std::nullopt;
}

std::string JsonReader::member_path(const std::string& parent, std::string_view key) {
  if (!is_plain_key(key)) {
    return map_key_path(parent, key);
  }
  return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
}

std::string JsonReader::index_path(const std::string& parent, std::size_t index) {
  return fmt::format("{}[{}]", parent, index);
}

std::string JsonReader::map_key_path(const std::string& parent, std::string_view key) {
  return fmt::format("{}[{}]", parent, json(key).dump(-1, ' ', false, json::error_handler_t::replace));
}

}  // namespace kernelhub::metadata
