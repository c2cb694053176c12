// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <kernelhub/hub/file_slice.hpp>
#include <kernelhub/util/expected.hpp>

// The HTTP seam: HubClient speaks to a Transport, which is libcurl in production
// (make_curl_transport) and a scripted fake in the unit tests. A transport performs exactly one
// request and never follows redirects itself: the client does, because the Hub's rules (follow
// relative HEAD redirects only, drop the token on a host change) are protocol logic.
namespace kernelhub::hub {

// Response headers, in arrival order; names compared case-insensitively.
class HttpHeaders {
public:
  void add(std::string name, std::string value);
  // The first value of `name`, trimmed.
  std::optional<std::string> get(std::string_view name) const;
  const std::vector<std::pair<std::string, std::string>>& entries() const { return m_entries; }

private:
  std::vector<std::pair<std::string, std::string>> m_entries;
};

// Receives body bytes as they arrive. Returns false to abort the transfer (a write error).
using BodySink = std::function<bool(std::string_view chunk)>;
// Called once before the first body byte of a 2xx response that has a sink; returning false
// aborts the transfer. Lets a download decide between appending (206) and restarting (200).
using ResponseStart = std::function<bool(long status, const HttpHeaders& headers)>;
// Called with (bytes received so far in this request, total expected or 0 when unknown); for a
// request with an `upload` body, the bytes sent so far and the slice's length.
using TransferProgress = std::function<void(std::uint64_t received, std::uint64_t total)>;

// A body kept in memory (an API answer, an error page) is cut off past this size: the largest
// JSON answer of a real Hub (a repo's file list) is a few MB, and a server streaming an endless
// one must not grow the client without bound.
inline constexpr std::size_t k_max_memory_body_bytes = 32 * 1024 * 1024;
// The same for all response headers together (libcurl already limits a single header line).
inline constexpr std::size_t k_max_header_bytes = 256 * 1024;

struct HttpRequest {
  std::string method = "GET";  // GET, HEAD, POST, PUT, DELETE
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // When set, the body is this part of a file, read while it is sent (with Content-Length),
  // instead of `body`. Each perform reads it afresh, so a retried request sends it again.
  std::optional<FileSlice> upload;
  // When set, a 2xx body goes here instead of into HttpResponse::body (large downloads).
  BodySink sink;
  ResponseStart on_start;
  TransferProgress progress;
  std::chrono::seconds connect_timeout{10};
  // Abort when no byte arrives for this long (the reference's read timeout).
  std::chrono::seconds low_speed_timeout{30};
  // A body that does not go to `sink` fails the request (not retried) past this many bytes.
  std::size_t max_body_bytes = k_max_memory_body_bytes;
};

struct HttpResponse {
  long status = 0;
  HttpHeaders headers;
  std::string body;  // empty when the request had a sink and the status was 2xx
};

// A failure to get any response (connection refused, DNS, TLS, timeout, aborted by the sink).
struct TransportError {
  std::string message;
  bool transient = true;  // worth retrying (timeouts, resets); false for a sink abort
  // No connection could be made at all (refused, host not resolved): nothing is listening
  // there, so the client fails at once with "cannot reach" instead of backing off.
  bool unreachable = false;
};

class Transport {
public:
  virtual ~Transport() = default;
  // Must be safe to call from several threads at once (parallel downloads).
  virtual tl::expected<HttpResponse, TransportError> perform(const HttpRequest& request) = 0;
};

// libcurl, with a pool of easy handles so connections are kept alive across requests,
// threads and clients: every call returns the process's one pool. Proxies and NO_PROXY come
// from the environment as libcurl reads them. Only http and https URLs are requested (libcurl
// refuses every other scheme).
std::shared_ptr<Transport> make_curl_transport();

}  // namespace kernelhub::hub
