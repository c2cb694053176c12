// SPDX-License-Identifier: Apache-2.0
// The one file that knows cpp-httplib: it turns httplib requests into HttpRequest, runs the
// HubRouter and writes its HttpResponse back.
#include <kernelhub/server/http_server.hpp>

#include <atomic>
#include <cctype>
#include <csignal>
#include <ctime>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include <kernelhub/server/hub_router.hpp>

namespace kernelhub::server {

namespace {

// Keep connections open for the client's pooled connections and for load tests.
constexpr std::size_t k_keep_alive_requests = 10000;
constexpr time_t k_keep_alive_seconds = 30;

HttpRequest to_request(const httplib::Request& raw, const std::string& fallback_base) {
  HttpRequest request;
  request.method = raw.method;
  // The raw target: httplib's `path` is already decoded, which would turn "%2F" into "/".
  request.target = raw.target;
  for (const auto& [name, value] : raw.headers) {
    std::string lower = name;
    for (char& c : lower) {
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    request.headers.emplace_back(std::move(lower), value);
  }
  request.body = raw.body;
  const std::string host = raw.get_header_value("Host");
  request.base_url = host.empty() ? fallback_base : "http://" + host;
  return request;
}

void write_response(const httplib::Request& raw, HttpResponse response, httplib::Response& out) {
  // Ranges are applied by the router (byte_range.hpp); httplib would cut the body a second
  // time, and also cut error bodies, so its parsed copy is dropped. The Request object is not
  // const where httplib owns it.
  const_cast<httplib::Request&>(raw).ranges.clear();
  out.status = response.status;
  for (auto& [name, value] : response.headers) {
    out.set_header(name, value);
  }
  if (!response.has_stream) {
    out.set_content(std::move(response.body), response.content_type);
    return;
  }
  if (response.stream_size == 0) {
    out.set_header("Content-Type", response.content_type);
    return;  // httplib then sends Content-Length: 0
  }
  const char* data = response.stream_data;
  auto owner = response.stream_owner;
  out.set_content_provider(
      response.stream_size, response.content_type,
      [data, owner](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
        // Only a HEAD has no data, and httplib never asks a HEAD for its body.
        return data != nullptr && sink.write(data + offset, length);
      });
}

bool has_body(const httplib::Request& raw) {
  const std::string length = raw.get_header_value("Content-Length");
  return (!length.empty() && length != "0") || raw.has_header("Transfer-Encoding");
}

// Waits for SIGINT or SIGTERM (blocked in every thread, so only this one sees them) and stops
// the server; returns when `done` is set.
void watch_signals(httplib::Server& server, const std::atomic<bool>& done) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  const timespec tick{0, 200'000'000};
  while (!done.load()) {
    if (sigtimedwait(&signals, nullptr, &tick) > 0) {
      server.stop();
      return;
    }
  }
}

}  // namespace

util::Expected<void> serve(ServerSettings settings, const ListenAddress& address,
                           const std::function<void(const std::string& url)>& on_listening) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const std::size_t threads = settings.threads;
  const std::size_t max_body = settings.max_body_bytes;
  HubRouter router(std::move(settings));
  httplib::Server server;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server.set_payload_max_length(max_body);
  server.set_keep_alive_max_count(k_keep_alive_requests);
  server.set_keep_alive_timeout(k_keep_alive_seconds);
  // httplib writes a streamed answer's headers and body in separate sends; with Nagle on, a
  // keep-alive client's delayed ACK then holds each small answer for ~40 ms (wrk measured
  // ~350 requests/s on a 4 KiB resolve). Small answers must leave at once.
  server.set_tcp_nodelay(true);

  std::string base_url;
  const auto handle = [&router, &base_url](const httplib::Request& raw, httplib::Response& out) {
    write_response(raw, router.handle(to_request(raw, base_url)), out);
  };
  // Reads without a body are answered before httplib's regex routing; anything with a body
  // goes through the content-reader handlers below, which read (drain) it in full first.
  server.set_pre_routing_handler([&handle](const httplib::Request& raw, httplib::Response& out) {
    if ((raw.method == "GET" || raw.method == "HEAD") && !has_body(raw)) {
      handle(raw, out);
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // A content reader, rather than httplib's own body reading, because httplib caps
  // form-urlencoded bodies at 8 KiB (curl's default type for -d) and would hand a multipart
  // body to callbacks we do not have.
  const auto handle_body = [&router, &base_url](const httplib::Request& raw,
                                                httplib::Response& out,
                                                const httplib::ContentReader& reader) {
    std::string body;
    bool read = false;
    if (raw.is_multipart_form_data()) {
      reader([](const httplib::MultipartFormData&) { return true; },
             [](const char*, std::size_t) { return true; });
      write_response(raw, error_response(HubError{415, "", "multipart bodies are not accepted"}),
                     out);
      return;
    }
    read = reader([&body](const char* data, std::size_t length) {
      body.append(data, length);
      return true;
    });
    if (!read) {
      // httplib has set 413 (and skipped the body) or 400 (a broken body).
      const int status = out.status == 413 ? 413 : 400;
      write_response(raw,
                     error_response(HubError{status, "",
                                             status == 413 ? "request body too large"
                                                           : "request body could not be read"}),
                     out);
      return;
    }
    HttpRequest request = to_request(raw, base_url);
    request.body = body;
    write_response(raw, router.handle(request), out);
  };
  const std::string any_path = R"([\s\S]*)";
  server.Get(any_path, handle);
  server.Post(any_path, handle_body);
  server.Put(any_path, handle_body);
  server.Delete(any_path, handle_body);
  server.Patch(any_path, handle_body);
  server.Options(any_path, handle);
  // The same methods without a body (a DELETE often has none) skip the content readers.
  server.Post(any_path, handle);
  server.Put(any_path, handle);
  server.Delete(any_path, handle);
  server.Patch(any_path, handle);
  server.set_exception_handler(
      [](const httplib::Request&, httplib::Response& out, std::exception_ptr error) {
        std::string message = "internal error";
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          message = fmt::format("internal error: {}", e.what());
        } catch (...) {
        }
        HttpResponse response = error_response(HubError{500, "", message});
        out.status = 500;
        for (auto& [name, value] : response.headers) {
          out.set_header(name, value);
        }
        out.set_content(response.body, response.content_type);
      });
  // httplib's own refusals (413 body too large, 400 unreadable request) get the Hub's JSON
  // form too; answers the router made already have a body and are left alone.
  const httplib::Server::HandlerWithResponse json_errors = [](const httplib::Request&,
                                                             httplib::Response& out) {
    if (!out.body.empty() || out.content_provider_) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    const std::string message = out.status == 413
                                    ? "request body too large"
                                    : fmt::format("request refused ({})", out.status);
    HttpResponse response = error_response(HubError{out.status, "", message});
    for (auto& [name, value] : response.headers) {
      out.set_header(name, value);
    }
    out.set_content(response.body, response.content_type);
    return httplib::Server::HandlerResponse::Handled;
  };
  server.set_error_handler(json_errors);

  int port = address.port;
  if (port == 0) {
    port = server.bind_to_any_port(address.host);
    if (port < 0) {
      return util::fail(fmt::format("cannot listen on {}: no free port", address.host));
    }
  } else if (!server.bind_to_port(address.host, port)) {
    return util::fail(fmt::format("cannot listen on {}:{}", address.host, port));
  }
  base_url = fmt::format("http://{}:{}", address.host, port);
  on_listening(base_url);

  std::atomic<bool> done{false};
  std::thread watcher([&server, &done] { watch_signals(server, done); });
  const bool listened = server.listen_after_bind();
  done = true;
  watcher.join();
  if (!listened && server.is_running()) {
    return util::fail("the server stopped with an error");
  }
  return {};
}

}  // namespace kernelhub::server
