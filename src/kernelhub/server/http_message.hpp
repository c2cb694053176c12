// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <kernelhub/server/hub_error.hpp>

namespace kernelhub::server {

// An HTTP request as the Hub service sees it, free of the HTTP library's types so routing and
// handlers can be tested without sockets.
struct HttpRequest {
  std::string method;
  std::string target;                                         // raw, with the query
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-case
  std::string_view body;                                      // owned by the transport
  // Called with a part of `body` the handler has read and may not need again soon: a body
  // spooled to a file drops those pages from memory (they are read back from the file if
  // touched again), so a pass over a large body never holds it all resident. Empty for a
  // body held in memory.
  std::function<void(std::string_view)> release_body;
  // The file a body spooled to disk is in (empty for a body held in memory): an LFS upload is
  // checked and linked into the store from it, never read into memory.
  std::string body_file;
  std::string base_url;  // "http://<Host header>", for URLs the client must parse back
  std::string peer;      // the client's IP address; empty where no socket is involved

  std::optional<std::string_view> header(std::string_view lower_name) const;
};

struct HttpResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type = "application/json";
  std::string body;
  // Bytes sent from another owner without a copy (a git blob), already cut to the range.
  // `stream_data` may be null for a HEAD, which sends only the length.
  bool has_stream = false;
  const char* stream_data = nullptr;
  std::uint64_t stream_size = 0;
  std::shared_ptr<const void> stream_owner;
  // Or a body produced while it is sent (a large blob inflated a block at a time),
  // `stream_size` bytes in all: each call fills up to `capacity` bytes of `out` and returns
  // how many. Used instead of `stream_data` when set.
  std::function<HubExpected<std::size_t>(char* out, std::size_t capacity)> stream_reader;
  // When the reader's bytes are those of an open file from `stream_offset` on (an LFS
  // object), its descriptor, kept open by `stream_owner`: a connection sends them with
  // sendfile(2), so they never pass through the server's memory.
  int stream_fd = -1;
  std::uint64_t stream_offset = 0;

  void set_header(std::string name, std::string value);
};

HttpResponse json_response(int status, const nlohmann::json& body);

// The Hub's error form: X-Error-Code (when the error has one), X-Error-Message and a JSON
// body {"error": message}. Header values lose control characters, so a hostile path in a
// message can never split a header.
HttpResponse error_response(const HubError& error);

}  // namespace kernelhub::server
