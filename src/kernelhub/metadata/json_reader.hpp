// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <kernelhub/util/diagnostic.hpp>

// Typed access to a parsed JSON document that reports every problem with the JSON path of the
// offending value ("backend.type", "kernel-depends[0].repo-id") into a DiagnosticSink, the way
// serde reads the reference's structs: unknown keys are ignored, a repeated known key is an
// error. Used by the metadata.json reader; later by the lock-file readers.
namespace kernelhub::metadata {

// How a struct field treats absence and null, mirroring the serde attributes of the reference.
enum class Field {
  required,          // plain field: missing and null are errors
  optional,          // Option<T>: missing or null both mean absent
  present_not_null,  // missing means absent, null is an error (`deserialize_present`)
};

class JsonReader {
 public:
  // Parses `text`; a syntax error is reported (with its line and column) and leaves `root()`
  // null. A UTF-8 byte order mark is a syntax error, as for serde_json.
  JsonReader(std::string_view text, std::string file_name, util::DiagnosticSink& sink);

  bool parsed() const { return m_parsed; }
  bool has_errors() const { return m_errors > 0; }
  std::size_t error_count() const { return m_errors; }
  const nlohmann::json& root() const { return m_root; }

  void error(const std::string& path, std::string message, std::string hint = {});

  // Reports and returns false unless `value` is an object.
  bool expect_object(const nlohmann::json& value, const std::string& path);
  // The member of `object` (at `path`) named by `names` (the key, then its aliases). Reports a
  // repeated key and, for Field::required, a missing one. nullptr when absent.
  const nlohmann::json* member(const nlohmann::json& object, const std::string& path,
                               std::initializer_list<std::string_view> names, Field field);
  // The keys of the object at `path` as written, repeats included.
  const std::vector<std::string>& keys_at(const std::string& path) const;

  std::optional<std::string> string(const nlohmann::json& value, const std::string& path);
  std::optional<std::uint64_t> unsigned_integer(const nlohmann::json& value,
                                                const std::string& path);
  std::optional<bool> boolean(const nlohmann::json& value, const std::string& path);
  std::optional<std::vector<std::string>> string_array(const nlohmann::json& value,
                                                       const std::string& path);

  static std::string member_path(const std::string& parent, std::string_view key);
  static std::string index_path(const std::string& parent, std::size_t index);
  // For keys of free-form maps, which may hold dots: `digest.files["a/b.py"]`.
  static std::string map_key_path(const std::string& parent, std::string_view key);

 private:
  void type_error(const nlohmann::json& value, const std::string& path, std::string_view expected);
  // False for text that held invalid UTF-8 or a lone surrogate before parsing (see the .cpp).
  bool is_checked_text(std::string_view text) const;

  std::string m_file_name;
  util::DiagnosticSink& m_sink;
  nlohmann::json m_root;
  bool m_parsed = false;
  bool m_replaced_content = false;
  std::size_t m_errors = 0;
  std::map<std::string, std::vector<std::string>> m_keys;
};

}  // namespace kernelhub::metadata
