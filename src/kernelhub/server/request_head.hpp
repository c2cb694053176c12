// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <kernelhub/server/http_message.hpp>

namespace kernelhub::server {

// What the server knows of a request once its line and headers are read, before any byte of
// its body: enough for HubRouter::admit to decide whether the body is read at all.
struct RequestHead {
  HttpRequest request;  // without a body; header names lower-case
  bool has_body = false;
  std::optional<std::uint64_t> content_length;  // none for a chunked body
  bool keep_alive = false;
  bool expect_continue = false;
  bool is_head = false;
  unsigned version = 11;  // 10 or 11
};

// Parses one request head from `bytes` (which may go on into the body) with the parser and
// limits the server reads sockets with: 431 when the head is larger than `max_head_bytes`,
// 400 for any framing the parser refuses (two different Content-Length values, a negative or
// non-numeric one, Content-Length with chunked, a malformed line), also 400 when `bytes` end
// before the head does. `fallback_base` is the base URL of a request without a Host header.
HubExpected<RequestHead> parse_request_head(std::string_view bytes, std::size_t max_head_bytes,
                                            const std::string& fallback_base);

}  // namespace kernelhub::server
