// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/http_transport.hpp>

#include <kernelhub/hub/ca_bundle.hpp>

#include <mutex>

#include <unistd.h>

#include <curl/curl.h>
#include <fmt/format.h>

// With ca_bundle.cpp, the only file that includes libcurl.
namespace kernelhub::hub {

namespace {

// libcurl's largest receive buffer (CURL_MAX_READ_SIZE in libcurl 7.88).
constexpr long k_download_buffer_bytes = 512L * 1024;

// Idle handles (each with its kept-alive connection) the pool holds at most; a download's
// threads return theirs and the ones past this are closed.
constexpr std::size_t k_max_idle_handles = 16;

struct EasyDeleter {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

// State shared with the callbacks of one transfer.
struct Transfer {
  CURL* handle = nullptr;
  const HttpRequest* request = nullptr;
  HttpResponse response;
  bool sink_failed = false;
  bool started = false;
  bool body_too_large = false;
  bool headers_too_large = false;
  std::size_t header_bytes = 0;
  // The file part an upload request sends, and why reading it failed.
  std::optional<FileSliceReader> upload;
  std::string upload_error;
};

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto& transfer = *static_cast<Transfer*>(user);
  std::string_view line(data, size * count);
  transfer.header_bytes += line.size();
  if (transfer.header_bytes > k_max_header_bytes) {
    // Counted over every response of the transfer, so an endless header stream stops too.
    transfer.headers_too_large = true;
    return 0;
  }
  if (line.starts_with("HTTP/")) {
    // A new response (after a 100 Continue, say): forget the headers of the previous one.
    transfer.response.headers = HttpHeaders();
    return line.size();
  }
  const auto colon = line.find(':');
  if (colon != std::string_view::npos) {
    auto value = line.substr(colon + 1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) {
      value.remove_suffix(1);
    }
    transfer.response.headers.add(std::string(line.substr(0, colon)), std::string(value));
  }
  return line.size();
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto& transfer = *static_cast<Transfer*>(user);
  std::string_view chunk(data, size * count);
  long status = 0;
  curl_easy_getinfo(transfer.handle, CURLINFO_RESPONSE_CODE, &status);
  if (transfer.request->sink && status >= 200 && status < 300) {
    if (!transfer.started) {
      transfer.started = true;
      if (transfer.request->on_start && !transfer.request->on_start(status, transfer.response.headers)) {
        transfer.sink_failed = true;
        return 0;
      }
    }
    if (!transfer.request->sink(chunk)) {
      transfer.sink_failed = true;
      return 0;  // makes curl stop with CURLE_WRITE_ERROR
    }
    return chunk.size();
  }
  if (chunk.size() > transfer.request->max_body_bytes - transfer.response.body.size()) {
    transfer.body_too_large = true;
    return 0;
  }
  transfer.response.body.append(chunk);
  return chunk.size();
}

// Fills libcurl's send buffer (CURLOPT_UPLOAD_BUFFERSIZE, 64 KiB by default) from the file:
// the only copy of an upload's bytes in memory.
size_t on_read(char* buffer, size_t size, size_t count, void* user) {
  auto& transfer = *static_cast<Transfer*>(user);
  auto got = transfer.upload->read(buffer, size * count);
  if (!got) {
    transfer.upload_error = got.error().message;
    return CURL_READFUNC_ABORT;
  }
  return *got;
}

// libcurl rewinds an upload when it must send the request again on a new connection.
int on_seek(void* user, curl_off_t offset, int origin) {
  auto& transfer = *static_cast<Transfer*>(user);
  if (origin != SEEK_SET || offset < 0 || !transfer.upload->seek(static_cast<std::uint64_t>(offset))) {
    return CURL_SEEKFUNC_CANTSEEK;
  }
  return CURL_SEEKFUNC_OK;
}

int on_progress(void* user, curl_off_t total, curl_off_t now, curl_off_t up_total, curl_off_t up_now) {
  auto& transfer = *static_cast<Transfer*>(user);
  if (transfer.request->progress) {
    if (transfer.upload) {
      transfer.request->progress(static_cast<std::uint64_t>(up_now), static_cast<std::uint64_t>(up_total));
    } else {
      transfer.request->progress(static_cast<std::uint64_t>(now), static_cast<std::uint64_t>(total));
    }
  }
  return 0;
}

// libcurl's global set-up (OpenSSL's among it: ~0.1 ms of CPU in a Python process) runs on the
// first transfer, not when a client is made: a load from the cache alone makes a client and
// no request.
void init_curl_once() {
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

class CurlTransport final : public Transport {
public:
  tl::expected<HttpResponse, TransportError> perform(const HttpRequest& request) override {
    init_curl_once();
    EasyHandle handle = acquire();
    if (!handle) {
      return tl::unexpected(TransportError{"cannot create a libcurl handle", false});
    }
    Transfer transfer;
    transfer.handle = handle.get();
    transfer.request = &request;
    CURL* h = handle.get();

    curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    // Only TLS reads the bundle, and choosing it asks libcurl for its version record (every
    // library's version string): a plain-http Hub (`kernelhub serve`) skips that.
    if (request.url.starts_with("https://")) {
      if (const auto& bundle = ca_bundle()) {
        curl_easy_setopt(h, CURLOPT_CAINFO, bundle->c_str());
      }
    }
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    // Redirects are followed by HubClient, which checks each target; this is the second line:
    // a gopher:// or file:// URL that got past it still sends nothing anywhere.
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, static_cast<long>(request.connect_timeout.count()));
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, static_cast<long>(request.low_speed_timeout.count()));
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &transfer);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &transfer);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, request.progress ? 0L : 1L);
    if (request.sink) {
      // A download's bytes reach the sink in pieces of up to this size (16 KiB by default):
      // fewer, larger reads and writes for the same bytes (6% less CPU for 3 x 70 MB).
      curl_easy_setopt(h, CURLOPT_BUFFERSIZE, k_download_buffer_bytes);
    }

    if (request.method == "HEAD") {
      curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (request.method != "GET") {
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    if (request.upload) {
      auto reader = FileSliceReader::open(*request.upload);
      if (!reader) {
        return tl::unexpected(TransportError{reader.error().message, false});
      }
      transfer.upload.emplace(std::move(*reader));
      // CURLOPT_UPLOAD sends Content-Length from INFILESIZE (no chunked encoding, which
      // presigned S3 part URLs refuse) and pulls the body through on_read.
      curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.upload->length));
      curl_easy_setopt(h, CURLOPT_READFUNCTION, &on_read);
      curl_easy_setopt(h, CURLOPT_READDATA, &transfer);
      curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, &on_seek);
      curl_easy_setopt(h, CURLOPT_SEEKDATA, &transfer);
    } else if (request.method == "POST" || request.method == "PUT" || !request.body.empty()) {
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
    }

    curl_slist* raw_headers = nullptr;
    for (const auto& [name, value] : request.headers) {
      raw_headers = curl_slist_append(raw_headers, fmt::format("{}: {}", name, value).c_str());
    }
    // No "Expect: 100-continue" round trip on large commits.
    raw_headers = curl_slist_append(raw_headers, "Expect:");
    std::unique_ptr<curl_slist, SlistDeleter> headers(raw_headers);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());

    const CURLcode code = curl_easy_perform(h);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
    if (code != CURLE_OK) {
      // Any failure may leave the connection in a bad state: drop the handle.
      if (!transfer.upload_error.empty()) {
        return tl::unexpected(TransportError{transfer.upload_error, false});
      }
      if (transfer.sink_failed) {
        return tl::unexpected(TransportError{"cannot write the downloaded bytes", false});
      }
      if (transfer.body_too_large) {
        return tl::unexpected(TransportError{
            fmt::format("{} {}: the answer is larger than {} bytes", request.method, request.url,
                        request.max_body_bytes),
            false});
      }
      if (transfer.headers_too_large) {
        return tl::unexpected(TransportError{
            fmt::format("{} {}: the answer's headers are larger than {} bytes", request.method,
                        request.url, k_max_header_bytes),
            false});
      }
      // A refused connection or an unknown host is no passing fault: huggingface_hub does not
      // retry those for reads either, and backing off from them took 19 s (issue 22 §9).
      const bool unreachable = code == CURLE_COULDNT_CONNECT ||
                               code == CURLE_COULDNT_RESOLVE_HOST ||
                               code == CURLE_COULDNT_RESOLVE_PROXY;
      const bool transient = !unreachable && code != CURLE_UNSUPPORTED_PROTOCOL &&
                             code != CURLE_URL_MALFORMAT;
      return tl::unexpected(TransportError{
          fmt::format("{} {}: {}", request.method, request.url, curl_easy_strerror(code)),
          transient, unreachable});
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &transfer.response.status);
    release(std::move(handle));
    return std::move(transfer.response);
  }

private:
  // Reusing handles keeps their connection caches, so requests to one host share a
  // keep-alive connection.
  EasyHandle acquire() {
    {
      std::lock_guard lock(m_mutex);
      forget_inherited_handles();
      if (!m_idle.empty()) {
        EasyHandle handle = std::move(m_idle.back());
        m_idle.pop_back();
        curl_easy_reset(handle.get());
        return handle;
      }
    }
    return EasyHandle(curl_easy_init());
  }

  void release(EasyHandle handle) {
    std::lock_guard lock(m_mutex);
    forget_inherited_handles();
    if (m_idle.size() < k_max_idle_handles) {
      m_idle.push_back(std::move(handle));
    }
  }

  // A forked child (a DataLoader worker, a multiprocessing pool) inherits the parent's idle
  // handles, whose sockets, and TLS sessions, the parent still uses: the child must neither
  // send on them nor close them (a TLS close would end the parent's session), so it lets go
  // of them without cleaning up and connects afresh.
  void forget_inherited_handles() {
    const pid_t pid = ::getpid();
    if (pid == m_owner) {
      return;
    }
    for (auto& handle : m_idle) {
      static_cast<void>(handle.release());
    }
    m_idle.clear();
    m_owner = pid;
  }

  std::mutex m_mutex;
  std::vector<EasyHandle> m_idle;
  pid_t m_owner = ::getpid();
};

}  // namespace

std::shared_ptr<Transport> make_curl_transport() {
  // One pool per process, so the connections a load made serve the next load and every client
  // (a warm load otherwise closed two connections at its end and opened them again at the next
  // one). Never destroyed: at exit, libcurl's TLS library may be torn down before a static
  // would close its connections; the system closes the sockets.
  static auto* const shared = new std::shared_ptr<Transport>(std::make_shared<CurlTransport>());
  return *shared;
}

}  // namespace kernelhub::hub
