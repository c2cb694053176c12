// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/commit_request.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/server/repo_id.hpp>

namespace kernelhub::server {

namespace {

using nlohmann::json;

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') {
    return c - 'A';
  }
  if (c >= 'a' && c <= 'z') {
    return c - 'a' + 26;
  }
  if (c >= '0' && c <= '9') {
    return c - '0' + 52;
  }
  if (c == '+') {
    return 62;
  }
  if (c == '/') {
    return 63;
  }
  return -1;
}

// A string member of a JSON object, or nullopt when absent, null or not a string.
std::optional<std::string> string_member(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) {
    return std::nullopt;
  }
  return it->get<std::string>();
}

HubExpected<std::string> operation_path(const json& value, std::size_t line) {
  auto path = string_member(value, "path");
  if (!path) {
    return bad_request(fmt::format("commit line {}: \"path\" must be a string", line));
  }
  KH_HUB_TRY(check_repo_path(*path));
  return *path;
}

HubExpected<CommitOperation> parse_operation(std::string_view key, const json& value,
                                             std::size_t line, const BlobSink& sink) {
  if (key == "file") {
    const std::string path = KH_HUB_TRY(operation_path(value, line));
    const auto encoding = string_member(value, "encoding").value_or("base64");
    if (encoding != "base64") {
      return bad_request(
          fmt::format("commit line {}: encoding \"{}\" is not supported; use base64", line,
                      encoding));
    }
    auto content = string_member(value, "content");
    std::optional<std::string> decoded = content ? decode_base64(*content) : std::nullopt;
    if (!decoded) {
      return bad_request(
          fmt::format("commit line {}: \"content\" of \"{}\" is not valid base64", line, path));
    }
    CommitOperation added{CommitOperation::Kind::add_file, path, {}, {}, decoded->size()};
    if (sink) {
      added.blob_id = KH_HUB_TRY(sink(*decoded));
    } else {
      added.content = std::move(*decoded);
    }
    return added;
  }
  if (key == "deletedFile") {
    return CommitOperation{CommitOperation::Kind::delete_file,
                           KH_HUB_TRY(operation_path(value, line)), {}, {}, 0};
  }
  if (key == "deletedFolder") {
    auto path = string_member(value, "path");
    while (path && path->size() > 1 && path->back() == '/') {
      path->pop_back();
    }
    if (!path) {
      return bad_request(fmt::format("commit line {}: \"path\" must be a string", line));
    }
    KH_HUB_TRY(check_repo_path(*path));
    return CommitOperation{CommitOperation::Kind::delete_folder, *path, {}, {}, 0};
  }
  if (key == "lfsFile") {
    return bad_request(fmt::format(
        "commit line {}: lfsFile is not supported by this server; preupload answers "
        "\"regular\", so send the content in a \"file\" line",
        line));
  }
  return bad_request(fmt::format("commit line {}: unknown key \"{}\"", line, key));
}

}  // namespace

std::optional<std::string> decode_base64(std::string_view text) {
  // RFC 4648 §4 strictly (§3.3, §3.5): only the base alphabet, whole quanta of four, `=` only
  // as the last one or two characters, and pad bits zero. OpenSSL's EVP_DecodeBlock accepted
  // "====" (a size underflow), "A===" (an empty file) and "QQ==QUJD" (padding mid-text).
  if (text.size() % 4 != 0) {
    return std::nullopt;
  }
  std::size_t padding = 0;
  if (!text.empty() && text.back() == '=') {
    padding = text.size() >= 2 && text[text.size() - 2] == '=' ? 2 : 1;
  }
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t quantum = 0;
  for (std::size_t i = 0; i < text.size() - padding; ++i) {
    const int value = base64_value(text[i]);
    if (value < 0) {
      return std::nullopt;
    }
    quantum = (quantum << 6) | static_cast<std::uint32_t>(value);
    if (i % 4 == 3) {
      out.push_back(static_cast<char>(quantum >> 16));
      out.push_back(static_cast<char>((quantum >> 8) & 0xff));
      out.push_back(static_cast<char>(quantum & 0xff));
      quantum = 0;
    }
  }
  if (padding == 2) {
    // "xx==": 12 bits, one byte and 4 pad bits.
    if ((quantum & 0xf) != 0) {
      return std::nullopt;
    }
    out.push_back(static_cast<char>(quantum >> 4));
  } else if (padding == 1) {
    // "xxx=": 18 bits, two bytes and 2 pad bits.
    if ((quantum & 0x3) != 0) {
      return std::nullopt;
    }
    out.push_back(static_cast<char>(quantum >> 10));
    out.push_back(static_cast<char>((quantum >> 2) & 0xff));
  }
  return out;
}

HubExpected<CommitRequest> parse_commit_request(std::string_view body, const BlobSink& sink) {
  CommitRequest request;
  bool seen_header = false;
  std::size_t line_number = 0;
  while (!body.empty()) {
    const std::size_t newline = body.find('\n');
    std::string_view line = body.substr(0, newline);
    body = newline == std::string_view::npos ? std::string_view() : body.substr(newline + 1);
    ++line_number;
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    if (line.find_first_not_of(" \t") == std::string_view::npos) {
      continue;
    }
    const json entry = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!entry.is_object() || !entry.contains("key") || !entry["key"].is_string() ||
        !entry.contains("value") || !entry["value"].is_object()) {
      return bad_request(fmt::format(
          "commit line {}: expected a JSON object {{\"key\": ..., \"value\": {{...}}}}",
          line_number));
    }
    const std::string key = entry["key"].get<std::string>();
    const json& value = entry["value"];
    if (!seen_header) {
      if (key != "header") {
        return bad_request("commit body must start with a \"header\" line");
      }
      seen_header = true;
      request.summary = string_member(value, "summary").value_or("");
      request.description = string_member(value, "description").value_or("");
      request.parent_commit = string_member(value, "parentCommit");
      continue;
    }
    if (key == "header") {
      return bad_request(fmt::format("commit line {}: a second header", line_number));
    }
    request.operations.push_back(KH_HUB_TRY(parse_operation(key, value, line_number, sink)));
  }
  if (!seen_header) {
    return bad_request("commit body is empty: expected a \"header\" line");
  }
  return request;
}

}  // namespace kernelhub::server
