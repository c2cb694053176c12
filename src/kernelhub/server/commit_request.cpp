// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/commit_request.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include <kernelhub/server/repo_id.hpp>

namespace kernelhub::server {

namespace {

using nlohmann::json;

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
                                             std::size_t line) {
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
    return CommitOperation{CommitOperation::Kind::add_file, path, std::move(*decoded)};
  }
  if (key == "deletedFile") {
    return CommitOperation{CommitOperation::Kind::delete_file,
                           KH_HUB_TRY(operation_path(value, line)), {}};
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
    return CommitOperation{CommitOperation::Kind::delete_folder, *path, {}};
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
  std::string clean;
  clean.reserve(text.size());
  for (const char c : text) {
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') {
      clean.push_back(c);
    }
  }
  if (clean.size() % 4 != 0) {
    return std::nullopt;
  }
  std::string out(clean.size() / 4 * 3, '\0');
  if (clean.empty()) {
    return std::string();
  }
  const int written = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                      reinterpret_cast<const unsigned char*>(clean.data()),
                                      static_cast<int>(clean.size()));
  if (written < 0) {
    return std::nullopt;
  }
  // EVP_DecodeBlock counts the padding as zero bytes; drop one byte per '='.
  std::size_t size = static_cast<std::size_t>(written);
  for (std::size_t i = clean.size(); i > 0 && clean[i - 1] == '='; --i) {
    --size;
  }
  out.resize(size);
  return out;
}

HubExpected<CommitRequest> parse_commit_request(std::string_view body) {
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
    request.operations.push_back(KH_HUB_TRY(parse_operation(key, value, line_number)));
  }
  if (!seen_header) {
    return bad_request("commit body is empty: expected a \"header\" line");
  }
  return request;
}

}  // namespace kernelhub::server
