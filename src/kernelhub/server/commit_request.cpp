// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/commit_request.hpp>

#include <cctype>
#include <cstring>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/server/lfs_pointer.hpp>
#include <kernelhub/server/lfs_policy.hpp>
#include <kernelhub/server/repo_id.hpp>

namespace kernelhub::server {

namespace {

using nlohmann::json;
using Release = std::function<void(std::string_view)>;

// A large line is read in blocks this long, each released once passed; decoding goes the same
// way (a multiple of 4, so every block but the last is whole base64 quanta).
constexpr std::size_t k_release_block = std::size_t{4} << 20;
static_assert(k_release_block % 4 == 0);

// text.find(wanted), releasing each block passed over without a hit: the newline of a 200 MB
// line is found without the line staying resident.
std::size_t find_releasing(std::string_view text, char wanted, const Release& release) {
  if (!release) {
    return text.find(wanted);
  }
  for (std::size_t at = 0; at < text.size(); at += k_release_block) {
    const std::string_view block = text.substr(at, k_release_block);
    const void* hit = std::memchr(block.data(), wanted, block.size());
    if (hit != nullptr) {
      return at + static_cast<std::size_t>(static_cast<const char*>(hit) - block.data());
    }
    release(block);
  }
  return std::string_view::npos;
}

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

// A commit of one 150 MB file is one 200 MB line. Parsed as JSON, its base64 string would be
// grown in the lexer's buffer (up to twice its size while it doubles) and copied into the
// tree: with the body and the decoded bytes, 4 to 5 times the body in memory. Base64 needs no
// JSON escape, so the text between the quotes of `value.content` is the content itself: the
// line is split into that view and the rest of the line with `""` in its place, which is
// parsed as usual. Anything not plainly shaped so (an escape in the content or a key, a
// repeated key, broken JSON) gives nullopt, and the whole line is parsed the usual way.
struct SplitLine {
  std::string rest;
  std::string_view content;
};

class LineScanner {
 public:
  LineScanner(std::string_view text, const Release& release)
      : m_text(text), m_release(release) {}

  std::optional<SplitLine> split() {
    std::optional<std::pair<std::size_t, std::size_t>> found;
    if (!object([&](std::string_view key) {
          if (key != "value" || peek() != '{') {
            return skip_value();
          }
          if (m_seen_value) {
            return false;
          }
          m_seen_value = true;
          return object([&](std::string_view inner) {
            if (inner != "content" || peek() != '"') {
              return skip_value();
            }
            if (found) {
              return false;
            }
            const std::size_t start = m_at + 1;
            if (!string(nullptr)) {
              return false;
            }
            found = std::pair{start, m_at - 1};
            // string() saw every character: no second pass over a large content.
            return !m_last_escaped;
          });
        })) {
      return std::nullopt;
    }
    skip_space();
    if (m_at != m_text.size() || !found) {
      return std::nullopt;
    }
    const auto [start, end] = *found;
    SplitLine out;
    out.rest.reserve(m_text.size() - (end - start));
    out.rest.append(m_text.substr(0, start));
    out.rest.append(m_text.substr(end));
    out.content = m_text.substr(start, end - start);
    return out;
  }

 private:
  char peek() {
    skip_space();
    return m_at < m_text.size() ? m_text[m_at] : '\0';
  }

  void skip_space() {
    while (m_at < m_text.size() && (m_text[m_at] == ' ' || m_text[m_at] == '\t' ||
                                    m_text[m_at] == '\r' || m_text[m_at] == '\n')) {
      ++m_at;
    }
  }

  // A string token; `key` gets its text when it has no escape (else the scan gives up).
  bool string(std::string_view* key) {
    if (peek() != '"') {
      return false;
    }
    const std::size_t start = ++m_at;
    bool escaped = false;
    std::size_t released = start;
    for (; m_at < m_text.size() && m_text[m_at] != '"'; ++m_at) {
      if (m_text[m_at] == '\\') {
        escaped = true;
        ++m_at;
      }
      if (m_release && m_at - released >= k_release_block) {
        m_release(m_text.substr(released, m_at - released));
        released = m_at;
      }
    }
    m_last_escaped = escaped;
    if (m_at >= m_text.size() || (key != nullptr && escaped)) {
      return false;
    }
    if (key != nullptr) {
      *key = m_text.substr(start, m_at - start);
    }
    ++m_at;
    return true;
  }

  // `{ "key": value, ... }`, `member` reading each value.
  template <typename Member>
  bool object(Member&& member) {
    if (peek() != '{') {
      return false;
    }
    ++m_at;
    if (peek() == '}') {
      ++m_at;
      return true;
    }
    while (true) {
      std::string_view key;
      if (!string(&key) || peek() != ':') {
        return false;
      }
      ++m_at;
      if (!member(key)) {
        return false;
      }
      const char next = peek();
      ++m_at;
      if (next == '}') {
        return true;
      }
      if (next != ',') {
        return false;
      }
    }
  }

  // Any other value, skipped by its brackets and strings (nlohmann checks it on the rest).
  // Every quote is read by string(), so the scan splits strings exactly where a JSON lexer
  // does: the content range is always the inside of one string token.
  bool skip_value() {
    const char first = peek();
    if (first == '"') {
      return string(nullptr);
    }
    if (first == '{' || first == '[') {
      int depth = 0;
      while (m_at < m_text.size()) {
        const char c = m_text[m_at];
        if (c == '"') {
          if (!string(nullptr)) {
            return false;
          }
          continue;
        }
        if (c == '{' || c == '[') {
          ++depth;
        } else if ((c == '}' || c == ']') && --depth == 0) {
          ++m_at;
          return true;
        }
        ++m_at;
      }
      return false;
    }
    // A number or a literal.
    const std::size_t start = m_at;
    while (m_at < m_text.size() && (std::isalnum(static_cast<unsigned char>(m_text[m_at])) != 0 ||
                                    m_text[m_at] == '-' || m_text[m_at] == '+' ||
                                    m_text[m_at] == '.')) {
      ++m_at;
    }
    return m_at > start;
  }

  std::string_view m_text;
  const Release& m_release;
  std::size_t m_at = 0;
  bool m_seen_value = false;
  bool m_last_escaped = false;  // whether the last string token had an escape
};

HubExpected<std::string> operation_path(const json& value, std::size_t line) {
  auto path = string_member(value, "path");
  if (!path) {
    return bad_request(fmt::format("commit line {}: \"path\" must be a string", line));
  }
  KH_HUB_TRY(check_repo_path(*path));
  return *path;
}

// A large file's base64 decoded a block at a time into a BlobStream: the decoded bytes are
// never whole in memory. Accepts exactly what decode_base64 accepts; nullopt (with no blob
// stored) when the text is not valid base64.
HubExpected<std::optional<std::string>> stream_base64(std::string_view text,
                                                      const CommitSinks& sinks,
                                                      std::uint64_t* size) {
  if (text.size() % 4 != 0) {
    return std::optional<std::string>();
  }
  std::size_t padding = 0;
  if (!text.empty() && text.back() == '=') {
    padding = text.size() >= 2 && text[text.size() - 2] == '=' ? 2 : 1;
  }
  *size = text.size() / 4 * 3 - padding;
  std::unique_ptr<BlobStream> stream = KH_HUB_TRY(sinks.open_stream(*size));
  for (std::size_t at = 0; at < text.size(); at += k_release_block) {
    const std::string_view block = text.substr(at, k_release_block);
    // Padding is only allowed at the very end; decode_base64 would take it at a block's end.
    const bool last = at + block.size() == text.size();
    const auto decoded = !last && block.back() == '=' ? std::nullopt : decode_base64(block);
    if (!decoded) {
      return std::optional<std::string>();
    }
    KH_HUB_TRY(stream->write(*decoded));
    if (sinks.release) {
      sinks.release(block);
    }
  }
  return std::optional<std::string>(KH_HUB_TRY(stream->finish()));
}

// `raw_content`: the content's text when the line was split (LineScanner), else nullopt and
// the content is `value.content`.
HubExpected<CommitOperation> parse_operation(std::string_view key, const json& value,
                                             std::optional<std::string_view> raw_content,
                                             std::size_t line, const CommitSinks& sinks) {
  const BlobSink& sink = sinks.blob;
  if (key == "file") {
    const std::string path = KH_HUB_TRY(operation_path(value, line));
    const auto encoding = string_member(value, "encoding").value_or("base64");
    if (encoding != "base64") {
      return bad_request(
          fmt::format("commit line {}: encoding \"{}\" is not supported; use base64", line,
                      encoding));
    }
    if (raw_content && sinks.open_stream && raw_content->size() > k_stream_content_chars) {
      if (sinks.admit) {
        // The first 684 characters are 171 whole quanta: 513 bytes, no padding in a text this
        // long.
        const auto head = decode_base64(raw_content->substr(0, 684));
        if (!head) {
          return bad_request(fmt::format(
              "commit line {}: \"content\" of \"{}\" is not valid base64", line, path));
        }
        const std::uint64_t announced = raw_content->size() / 4 * 3 -
                                        (raw_content->ends_with("==")  ? 2
                                         : raw_content->ends_with("=") ? 1
                                                                       : 0);
        if (!sinks.admit(path, announced, *head)) {
          return CommitOperation{CommitOperation::Kind::add_file, path, {}, {}, announced, {}};
        }
      }
      std::uint64_t size = 0;
      const auto blob_id = KH_HUB_TRY(stream_base64(*raw_content, sinks, &size));
      if (!blob_id) {
        return bad_request(fmt::format("commit line {}: \"content\" of \"{}\" is not valid base64",
                                       line, path));
      }
      return CommitOperation{CommitOperation::Kind::add_file, path, {}, *blob_id, size, {}};
    }
    std::optional<std::string> decoded;
    if (raw_content) {
      decoded = decode_base64(*raw_content);
    } else if (const auto content = string_member(value, "content")) {
      decoded = decode_base64(*content);
    }
    if (!decoded) {
      return bad_request(
          fmt::format("commit line {}: \"content\" of \"{}\" is not valid base64", line, path));
    }
    CommitOperation added{CommitOperation::Kind::add_file, path, {}, {}, decoded->size(), {}};
    if (sinks.admit &&
        !sinks.admit(path, decoded->size(),
                     std::string_view(*decoded).substr(0, k_upload_sample_bytes))) {
      return added;
    }
    if (sink) {
      added.blob_id = KH_HUB_TRY(sink(*decoded));
    } else {
      added.content = std::move(*decoded);
    }
    return added;
  }
  if (key == "deletedFile") {
    return CommitOperation{CommitOperation::Kind::delete_file,
                           KH_HUB_TRY(operation_path(value, line)), {}, {}, 0, {}};
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
    return CommitOperation{CommitOperation::Kind::delete_folder, *path, {}, {}, 0, {}};
  }
  if (key == "lfsFile") {
    // {"path", "algo": "sha256", "oid", "size"?} (hub-api.md §3.4; a copy omits the size).
    const std::string path = KH_HUB_TRY(operation_path(value, line));
    const auto algo = string_member(value, "algo").value_or("sha256");
    if (algo != "sha256") {
      return bad_request(fmt::format(
          "commit line {}: lfsFile \"{}\": algo \"{}\" is not supported; use sha256", line,
          path, algo));
    }
    const auto oid = string_member(value, "oid");
    if (!oid || !is_sha256_hex(*oid)) {
      return bad_request(fmt::format(
          "commit line {}: lfsFile \"{}\": \"oid\" must be 64 lower-case hex digits", line,
          path));
    }
    std::uint64_t size = 0;
    if (const auto it = value.find("size"); it != value.end() && !it->is_null()) {
      if (!it->is_number_unsigned()) {
        return bad_request(fmt::format(
            "commit line {}: lfsFile \"{}\": \"size\" must be a non-negative integer", line,
            path));
      }
      size = it->get<std::uint64_t>();
    }
    return CommitOperation{CommitOperation::Kind::add_lfs_file, path, {}, {}, size, *oid};
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
  return parse_commit_request(body, CommitSinks{sink, nullptr, nullptr, nullptr});
}

HubExpected<CommitRequest> parse_commit_request(std::string_view body, const CommitSinks& sinks) {
  CommitRequest request;
  bool seen_header = false;
  std::size_t line_number = 0;
  while (!body.empty()) {
    const std::size_t newline = find_releasing(body, '\n', sinks.release);
    std::string_view line = body.substr(0, newline);
    body = newline == std::string_view::npos ? std::string_view() : body.substr(newline + 1);
    ++line_number;
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    if (line.find_first_not_of(" \t") == std::string_view::npos) {
      continue;
    }
    const std::optional<SplitLine> split = LineScanner(line, sinks.release).split();
    const json entry = json::parse(split ? std::string_view(split->rest) : line, nullptr,
                                   /*allow_exceptions=*/false);
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
    const auto raw_content = split ? std::optional(split->content) : std::nullopt;
    request.operations.push_back(
        KH_HUB_TRY(parse_operation(key, value, raw_content, line_number, sinks)));
  }
  if (!seen_header) {
    return bad_request("commit body is empty: expected a \"header\" line");
  }
  return request;
}

}  // namespace kernelhub::server
