// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/verify/proto_json_message.hpp>

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include <kernelhub/verify/crypto.hpp>

namespace kernelhub::verify {

namespace {

using nlohmann::json;

std::string snake_case(std::string_view camel) {
  std::string out;
  for (const char c : camel) {
    if (c >= 'A' && c <= 'Z') {
      out.push_back('_');
      out.push_back(static_cast<char>(c - 'A' + 'a'));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

util::Expected<void> ProtoJsonMessage::only(std::initializer_list<std::string_view> fields) const {
  if (!m_value.is_object()) {
    return util::fail(fmt::format("\"{}\" must be an object", m_where));
  }
  for (const auto& item : m_value.items()) {
    // A named copy: clang before 16 cannot capture a structured binding in the lambda.
    const std::string& key = item.key();
    const bool known = std::any_of(fields.begin(), fields.end(), [&](std::string_view field) {
      return key == field || key == snake_case(field);
    });
    if (!known) {
      return util::fail(fmt::format("\"{}.{}\": extra inputs are not permitted", m_where, key));
    }
  }
  return {};
}

const json* ProtoJsonMessage::get(std::string_view field) const {
  for (const std::string& name : {std::string(field), snake_case(field)}) {
    const auto found = m_value.find(name);
    if (found != m_value.end() && !found->is_null()) {
      return &*found;
    }
  }
  return nullptr;
}

std::string ProtoJsonMessage::path(std::string_view field) const {
  return fmt::format("{}.{}", m_where, field);
}

util::Expected<const json*> ProtoJsonMessage::required(std::string_view field) const {
  const json* value = get(field);
  if (value == nullptr) {
    return util::fail(fmt::format("\"{}\": field required", path(field)));
  }
  return value;
}

util::Expected<std::string> ProtoJsonMessage::string(std::string_view field) const {
  const json* value = KH_TRY(required(field));
  if (!value->is_string()) {
    return util::fail(fmt::format("\"{}\": input should be a valid string", path(field)));
  }
  return value->get<std::string>();
}

util::Expected<std::string> ProtoJsonMessage::bytes(std::string_view field) const {
  const std::string text = KH_TRY(string(field));
  auto decoded = base64_decode(text);
  if (!decoded) {
    return util::fail(fmt::format("\"{}\": {}", path(field), decoded.error().message));
  }
  return decoded;
}

util::Expected<std::uint64_t> ProtoJsonMessage::uint64(std::string_view field) const {
  const json* value = KH_TRY(required(field));
  if (!value->is_string()) {
    return util::fail(fmt::format("\"{}\": expected protobuf uint64 as string, got {}",
                                  path(field), value->type_name()));
  }
  const std::string text = value->get<std::string>();
  std::uint64_t number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return util::fail(fmt::format("\"{}\": not an unsigned 64-bit integer: \"{}\"",
                                  path(field), text));
  }
  return number;
}

util::Expected<std::vector<const json*>> ProtoJsonMessage::array(std::string_view field,
                                                                  bool must_exist) const {
  const json* value = get(field);
  std::vector<const json*> items;
  if (value == nullptr) {
    if (must_exist) {
      return util::fail(fmt::format("\"{}\": field required", path(field)));
    }
    return items;
  }
  if (!value->is_array()) {
    return util::fail(fmt::format("\"{}\": input should be a valid list", path(field)));
  }
  for (const json& item : *value) {
    items.push_back(&item);
  }
  return items;
}

}  // namespace kernelhub::verify
