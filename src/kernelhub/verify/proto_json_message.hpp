// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <kernelhub/util/expected.hpp>

namespace kernelhub::verify {

// One protobuf message as a JSON object, read the way sigstore-models (pydantic, strict,
// extra="forbid") reads it: every key must be a known field, in camelCase or its snake_case
// proto name; null is the same as absent. Errors name the field's path from the document's
// root ("bundle.verificationMaterial.tlogEntries") in pydantic's words. The bundle readers
// (bundle.cpp) are built on it. It refers to `value`, which must outlive it.
class ProtoJsonMessage {
 public:
  ProtoJsonMessage(const nlohmann::json& value, std::string where)
      : m_value(value), m_where(std::move(where)) {}

  // Fails on a key outside `fields` (camelCase names), or when the value is no object.
  util::Expected<void> only(std::initializer_list<std::string_view> fields) const;

  // The field's value, or null when absent or null.
  const nlohmann::json* get(std::string_view field) const;

  // The path of `field` for messages: "<where>.<field>".
  std::string path(std::string_view field) const;

  util::Expected<const nlohmann::json*> required(std::string_view field) const;
  util::Expected<std::string> string(std::string_view field) const;
  // A `bytes` field: standard, padded base64.
  util::Expected<std::string> bytes(std::string_view field) const;
  // protobuf JSON writes 64-bit integers as strings of digits; a JSON number is refused.
  util::Expected<std::uint64_t> uint64(std::string_view field) const;
  // A repeated field's items; an absent one is empty unless `must_exist`.
  util::Expected<std::vector<const nlohmann::json*>> array(std::string_view field,
                                                           bool must_exist) const;

  ProtoJsonMessage child(const nlohmann::json& value, std::string_view field) const {
    return ProtoJsonMessage(value, path(field));
  }

 private:
  const nlohmann::json& m_value;
  std::string m_where;
};

}  // namespace kernelhub::verify
