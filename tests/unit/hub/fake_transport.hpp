// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <chrono>
#include <memory>
#include <deque>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <kernelhub/hub/hub_client.hpp>
#include <kernelhub/hub/http_transport.hpp>

// A scripted Transport: answers requests from a queue and records what was asked, so the
// client's protocol logic (redirects, retries, resume, token handling) is tested without a
// socket.
namespace kernelhub::hub::testing {

struct FakeReply {
  long status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // A transport failure instead of a response.
  bool fail = false;
  bool transient = true;
  // With `fail`: the body bytes delivered to the sink before the connection "breaks".
  std::string partial_body;
  // When set, a 2xx body (or a broken reply's partial_body) goes to the sink in pieces of this
  // size, as a socket delivers it, and the delivery stops at the first piece the sink refuses.
  std::size_t chunk_size = 0;
};

class FakeTransport final : public Transport {
public:
  void push(FakeReply reply) { m_replies.push_back(std::move(reply)); }
  void push(long status, std::vector<std::pair<std::string, std::string>> headers = {},
            std::string body = {}) {
    FakeReply reply;
    reply.status = status;
    reply.headers = std::move(headers);
    reply.body = std::move(body);
    push(std::move(reply));
  }

  tl::expected<HttpResponse, TransportError> perform(const HttpRequest& request) override {
    std::lock_guard lock(m_mutex);
    m_requests.push_back(request);
    if (request.upload) {
      // Sends the file part as libcurl does: read a send buffer's worth at a time.
      auto sent = read_upload(*request.upload, request.progress);
      if (!sent) {
        return tl::unexpected(TransportError{sent.error().message, false});
      }
      m_uploads.push_back(std::move(*sent));
    }
    if (m_replies.empty()) {
      return tl::unexpected(TransportError{"no scripted reply for " + request.url, false});
    }
    FakeReply reply = std::move(m_replies.front());
    m_replies.pop_front();
    HttpResponse response;
    response.status = reply.status;
    for (auto& [name, value] : reply.headers) {
      response.headers.add(name, value);
    }
    if (reply.fail) {
      if (request.sink && !reply.partial_body.empty()) {
        if (request.on_start && !request.on_start(reply.status, response.headers)) {
          return tl::unexpected(TransportError{"aborted", false});
        }
        const std::size_t step =
            reply.chunk_size == 0 ? reply.partial_body.size() : reply.chunk_size;
        for (std::size_t offset = 0; offset < reply.partial_body.size(); offset += step) {
          if (!request.sink(std::string_view(reply.partial_body).substr(offset, step))) {
            break;
          }
        }
      }
      return tl::unexpected(TransportError{"connection reset", reply.transient});
    }
    if (request.sink && reply.status >= 200 && reply.status < 300) {
      if (!reply.body.empty()) {
        if (request.on_start && !request.on_start(reply.status, response.headers)) {
          return tl::unexpected(TransportError{"aborted by on_start", false});
        }
        const std::size_t step = reply.chunk_size == 0 ? reply.body.size() : reply.chunk_size;
        for (std::size_t offset = 0; offset < reply.body.size(); offset += step) {
          const auto piece = std::string_view(reply.body).substr(offset, step);
          if (!request.sink(piece)) {
            return tl::unexpected(TransportError{"aborted by sink", false});
          }
          m_sunk_bytes += piece.size();
        }
      }
    } else {
      response.body = reply.body;
    }
    return response;
  }

  const std::vector<HttpRequest>& requests() const { return m_requests; }
  // The bytes of each request with an `upload` body, in request order.
  const std::vector<std::string>& uploads() const { return m_uploads; }
  // The largest single read of an upload body.
  std::size_t largest_upload_read() const { return m_largest_read; }
  static constexpr std::size_t k_send_buffer = 64 * 1024;  // libcurl's default upload buffer
  std::size_t pending() const { return m_replies.size(); }
  // Body bytes the sinks accepted, over every request.
  std::size_t sunk_bytes() const { return m_sunk_bytes; }

  // A connection that breaks after `partial_body` (a transient failure).
  static FakeReply broken(long status = 0,
                          std::vector<std::pair<std::string, std::string>> headers = {},
                          std::string partial_body = {}) {
    FakeReply reply;
    reply.status = status;
    reply.headers = std::move(headers);
    reply.fail = true;
    reply.partial_body = std::move(partial_body);
    return reply;
  }

  // The value of a request header, or "" when it was not sent.
  static std::string header(const HttpRequest& request, std::string_view name) {
    for (const auto& [key, value] : request.headers) {
      if (key == name) {
        return value;
      }
    }
    return {};
  }

private:
  util::Expected<std::string> read_upload(const FileSlice& slice, const TransferProgress& progress) {
    auto reader = KH_TRY(FileSliceReader::open(slice));
    std::string sent;
    std::string buffer(k_send_buffer, '\0');
    for (;;) {
      const auto got = KH_TRY(reader.read(buffer.data(), buffer.size()));
      if (got == 0) {
        return sent;
      }
      m_largest_read = std::max(m_largest_read, got);
      sent.append(buffer.data(), got);
      if (progress) {
        progress(sent.size(), slice.length);
      }
    }
  }

  std::mutex m_mutex;
  std::deque<FakeReply> m_replies;
  std::vector<HttpRequest> m_requests;
  std::size_t m_sunk_bytes = 0;
  std::vector<std::string> m_uploads;
  std::size_t m_largest_read = 0;
};

// A client of http://hub:8080 with a token over a FakeTransport: no progress bar, no waiting
// between retries.
// The kernel repo the hub tests talk about.
inline RepoRef kernel_repo() { return RepoRef{*RepoId::parse("org/relu"), RepoType::kernel}; }

struct FakeHub {
  std::shared_ptr<FakeTransport> transport = std::make_shared<FakeTransport>();

  HubClient client() {
    Endpoint endpoint;
    endpoint.url = "http://hub:8080";
    endpoint.token = "hf_secret";
    ClientOptions options;
    options.progress_bar = false;
    options.sleep = [](std::chrono::milliseconds) {};
    return HubClient(endpoint, options, transport);
  }
};

}  // namespace kernelhub::hub::testing
