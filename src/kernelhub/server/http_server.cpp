// SPDX-License-Identifier: Apache-2.0
// The one file that knows Asio (request_head.cpp shares Beast's head parser with it): an
// event-driven HTTP/1.1 server that turns requests into HttpRequest, asks the HubRouter
// whether to read the body at all, runs it and writes its HttpResponse back.
//
// Why not cpp-httplib (used until issue 12): it gives every connection a pool thread and reads
// with blocking calls, so 32 idle keep-alive sockets or 40 clients dripping one header byte at
// a time held every thread and locked everyone else out, SIGTERM waited on them, and it read
// a whole body before any handler could look at the token. Here a connection waiting for bytes
// holds no thread: each one is a socket, a parser and a deadline on one of the threads'
// event loops, and a thread is busy only while it runs a handler.
#include <kernelhub/server/http_server.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <variant>
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include <kernelhub/server/beast_request_head.hpp>
#include <kernelhub/server/hub_router.hpp>
#include <kernelhub/server/root_lock.hpp>

namespace kernelhub::server {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace fs = std::filesystem;
using tcp = asio::ip::tcp;

// How often a request may look at config.toml's and the token file's stamps.
constexpr std::chrono::milliseconds k_settings_check_interval{1000};
// After an answer to a request whose body was not read (a refused write), the connection is
// closed; the bytes the client is still sending are read and dropped for a short while first,
// so the close does not reset the connection before the client has read the answer.
constexpr std::chrono::seconds k_linger_time{2};
constexpr std::size_t k_linger_bytes = std::size_t{1} << 20;
constexpr std::size_t k_read_chunk = 16 << 10;
// A body made while it is sent goes out in blocks of this size.
constexpr std::size_t k_write_block = std::size_t{256} << 10;
// When accept() fails for want of descriptors, try again after this rather than spin.
constexpr std::chrono::milliseconds k_accept_backoff{50};

// Counts connections in all and per IP address, so one peer cannot take every slot.
class ConnectionCounter {
 public:
  ConnectionCounter(std::size_t max_total, std::size_t max_per_peer)
      : m_max_total(max_total), m_max_per_peer(max_per_peer) {}

  bool try_add(const std::string& peer) {
    std::lock_guard lock(m_mutex);
    std::size_t& count = m_per_peer[peer];
    if (m_total >= m_max_total || count >= m_max_per_peer) {
      if (count == 0) {
        m_per_peer.erase(peer);
      }
      return false;
    }
    ++count;
    ++m_total;
    return true;
  }

  void remove(const std::string& peer) {
    std::lock_guard lock(m_mutex);
    const auto it = m_per_peer.find(peer);
    if (it != m_per_peer.end() && --it->second == 0) {
      m_per_peer.erase(it);
    }
    --m_total;
  }

 private:
  std::mutex m_mutex;
  std::size_t m_max_total;
  std::size_t m_max_per_peer;
  std::size_t m_total = 0;
  std::map<std::string, std::size_t> m_per_peer;
};

// What every connection shares; outlives them all (serve() destroys the io_context first).
struct ServerState {
  HubRouter& router;
  ServerLimits limits;
  ConnectionCounter& connections;
  fs::path spool_dir;
  std::string fallback_base;
};

// A commit body spooled to disk and mapped back read-only: the router sees one string_view,
// and the pages are file-backed (the kernel may drop and re-read them) rather than heap that
// must stay resident. Unlinked when dropped.
class SpoolFile {
 public:
  SpoolFile() = default;
  SpoolFile(const SpoolFile&) = delete;
  SpoolFile& operator=(const SpoolFile&) = delete;
  ~SpoolFile() { reset(); }

  // A new empty file in `dir`; its path is path(). A `dir` removed under the running server
  // (by hand, by a tmp cleaner) is made again rather than failing every commit.
  bool create(const fs::path& dir) {
    reset();
    std::string pattern = (dir / "body-XXXXXX").string();
    int fd = ::mkstemp(pattern.data());
    if (fd < 0 && errno == ENOENT) {
      std::error_code ec;
      fs::create_directories(dir, ec);
      pattern = (dir / "body-XXXXXX").string();
      fd = ::mkstemp(pattern.data());
    }
    if (fd < 0) {
      return false;
    }
    ::close(fd);
    m_path = pattern;
    return true;
  }

  const fs::path& path() const { return m_path; }

  bool map() {
    const int fd = ::open(m_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return false;
    }
    struct stat info {};
    const bool sized = ::fstat(fd, &info) == 0;
    m_size = sized ? static_cast<std::size_t>(info.st_size) : 0;
    if (sized && m_size > 0) {
      void* data = ::mmap(nullptr, m_size, PROT_READ, MAP_PRIVATE, fd, 0);
      m_data = data == MAP_FAILED ? nullptr : static_cast<const char*>(data);
      if (m_data != nullptr) {
        ::madvise(const_cast<char*>(m_data), m_size, MADV_SEQUENTIAL);
      }
    }
    ::close(fd);
    return sized && (m_size == 0 || m_data != nullptr);
  }

  // Drops the whole pages inside `part` (a piece of view()) from this process's memory. The
  // mapping is private, read-only and never written, so MADV_DONTNEED only unmaps them: the
  // next read of those bytes faults them back in from the file.
  void drop_pages(std::string_view part) const {
    if (m_data == nullptr || part.data() < m_data || part.data() + part.size() > m_data + m_size) {
      return;
    }
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<std::uintptr_t>(part.data());
    const auto end = begin + part.size();
    const std::uintptr_t first = (begin + page - 1) / page * page;
    const std::uintptr_t last = end / page * page;
    if (last > first) {
      ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
    }
  }

  std::string_view view() const {
    return m_data == nullptr ? std::string_view() : std::string_view(m_data, m_size);
  }

  void reset() {
    if (m_data != nullptr) {
      ::munmap(const_cast<char*>(m_data), m_size);
      m_data = nullptr;
    }
    if (!m_path.empty()) {
      std::error_code ec;
      fs::remove(m_path, ec);
      m_path.clear();
    }
    m_size = 0;
  }

 private:
  fs::path m_path;
  const char* m_data = nullptr;
  std::size_t m_size = 0;
};

// One connection: read a head, decide, maybe read the body, answer, and again while the
// client keeps the connection alive. Every step runs on the thread of the connection's
// io_context and under a deadline of beast::tcp_stream, which closes the socket when it
// passes.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, ServerState& state, std::string peer)
      : m_stream(std::move(socket)), m_state(state), m_peer(std::move(peer)) {}

  ~Session() { m_state.connections.remove(m_peer); }

  void start() { read_head(); }

 private:
  enum class BodyState { read, unread };

  std::chrono::seconds transfer_time(std::uint64_t bytes) const {
    const auto& limits = m_state.limits;
    const std::uint64_t rate = std::max<std::uint64_t>(limits.min_rate_bytes, 1);
    return limits.transfer_timeout + std::chrono::seconds(bytes / rate);
  }

  void read_head() {
    m_version = 11;
    m_keep_alive = false;
    m_is_head = false;
    m_head.emplace();
    detail::prepare_head_parser(*m_head, m_state.limits.max_head_bytes);
    if (!m_first_request && m_buffer.size() == 0) {
      // Between requests: wait (idle) for the first byte, then the head has its own deadline.
      m_stream.expires_after(m_state.limits.idle_timeout);
      m_stream.async_read_some(
          m_buffer.prepare(k_read_chunk),
          [self = shared_from_this()](beast::error_code ec, std::size_t length) {
            if (ec) {
              self->close();
              return;
            }
            self->m_buffer.commit(length);
            self->read_rest_of_head();
          });
      return;
    }
    read_rest_of_head();
  }

  void read_rest_of_head() {
    m_stream.expires_after(m_state.limits.head_timeout);
    http::async_read_header(m_stream, m_buffer, *m_head,
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              self->on_head(ec);
                            });
  }

  void on_head(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == asio::error::eof ||
        ec == beast::error::timeout || ec == asio::error::operation_aborted ||
        ec == asio::error::connection_reset) {
      // The client left, or sent too little in time (the deadline already closed the socket).
      close();
      return;
    }
    if (ec) {
      const HubError refusal = detail::head_error(ec, m_state.limits.max_head_bytes);
      refuse(refusal.status, refusal.message);
      return;
    }
    RequestHead head = detail::describe_head(*m_head, m_state.fallback_base);
    m_version = head.version;
    m_keep_alive = head.keep_alive;
    m_is_head = head.is_head;
    m_request = std::move(head.request);
    m_request.peer = m_peer;

    const bool has_body = head.has_body;

    const auto plan = m_state.router.admit(m_request);
    if (!plan) {
      answer(error_response(plan.error()), has_body ? BodyState::unread : BodyState::read);
      return;
    }
    if (!has_body) {
      handle();
      return;
    }
    const auto length = head.content_length;
    if (length && *length > plan->limit) {
      answer(error_response(HubError{413, "",
                                     fmt::format("request body too large: {} bytes, the limit "
                                                 "here is {}",
                                                 *length, plan->limit)}),
             BodyState::unread);
      return;
    }
    m_body_plan = *plan;
    m_body_length = length.value_or(plan->limit);
    if (!head.expect_continue) {
      read_body();
      return;
    }
    auto interim = std::make_shared<http::response<http::empty_body>>(http::status::continue_,
                                                                      m_version);
    m_stream.expires_after(m_state.limits.transfer_timeout);
    http::async_write(m_stream, *interim,
                      [self = shared_from_this(), interim](beast::error_code ec, std::size_t) {
                        if (ec) {
                          self->close();
                          return;
                        }
                        self->read_body();
                      });
  }

  void read_body() {
    m_stream.expires_after(transfer_time(m_body_length));
    const auto done = [self = shared_from_this()](beast::error_code ec, std::size_t) {
      self->on_body(ec);
    };
    if (m_body_plan.storage == HubRouter::BodyPlan::Storage::file) {
      if (!m_spool.create(m_state.spool_dir)) {
        answer(error_response(HubError{500, "", "cannot create a file for the request body"}),
               BodyState::unread);
        return;
      }
      m_file_body.emplace(std::move(*m_head));
      m_file_body->body_limit(m_body_plan.limit);
      beast::error_code ec;
      m_file_body->get().body().open(m_spool.path().c_str(), beast::file_mode::write, ec);
      if (ec) {
        answer(error_response(HubError{500, "", fmt::format("cannot write the request body: {}",
                                                            ec.message())}),
               BodyState::unread);
        return;
      }
      http::async_read(m_stream, m_buffer, *m_file_body, done);
      return;
    }
    m_string_body.emplace(std::move(*m_head));
    m_string_body->body_limit(m_body_plan.limit);
    http::async_read(m_stream, m_buffer, *m_string_body, done);
  }

  void on_body(beast::error_code ec) {
    if (ec == http::error::body_limit) {
      answer(error_response(HubError{413, "",
                                     fmt::format("request body too large: the limit here is {} "
                                                 "bytes",
                                                 m_body_plan.limit)}),
             BodyState::unread);
      return;
    }
    if (ec) {
      // A client that left or stalled past its deadline gets nothing; a broken chunked
      // framing gets 400.
      if (ec.category() == http::make_error_code(http::error::bad_chunk).category()) {
        refuse(400, fmt::format("malformed request body: {}", ec.message()));
      } else {
        close();
      }
      return;
    }
    if (m_file_body) {
      m_file_body->get().body().close();
      m_file_body.reset();
      if (!m_spool.map()) {
        answer(error_response(HubError{500, "", "cannot read the spooled request body"}),
               BodyState::read);
        return;
      }
      m_request.body = m_spool.view();
      m_request.body_file = m_spool.path().string();
      m_request.release_body = [spool = &m_spool](std::string_view part) {
        spool->drop_pages(part);
      };
    } else if (m_string_body) {
      m_request.body = m_string_body->get().body();
    }
    handle();
  }

  void handle() {
    m_stream.expires_never();
    HttpResponse response;
    try {
      response = m_state.router.handle(m_request);
    } catch (const std::exception& error) {
      response = error_response(HubError{500, "", fmt::format("internal error: {}", error.what())});
    } catch (...) {
      response = error_response(HubError{500, "", "internal error"});
    }
    // The answer never points into the request body: drop it (and unlink its spool file) now,
    // not after the answer is written, so a client that got its answer finds nothing left.
    m_request.body = {};
    m_request.body_file.clear();
    m_spool.reset();
    m_string_body.reset();
    answer(std::move(response), BodyState::read);
  }

  // A transport-level refusal: the request cannot be trusted, so the connection ends.
  void refuse(int status, std::string message) {
    m_keep_alive = false;
    answer(error_response(HubError{status, "", std::move(message)}), BodyState::unread);
  }

  template <typename Body>
  void fill_head(http::response<Body>& out, const HttpResponse& response, bool keep_alive) {
    out.result(static_cast<unsigned>(response.status));
    out.version(m_version == 10 ? 10 : 11);
    for (const auto& [name, value] : response.headers) {
      out.insert(name, value);
    }
    out.set(http::field::content_type, response.content_type);
    out.keep_alive(keep_alive);
  }

  void answer(HttpResponse response, BodyState body) {
    // An unread body leaves the connection's framing unknown: answer, then close.
    const bool keep_alive = m_keep_alive && body == BodyState::read;
    const std::uint64_t size = response.has_stream ? response.stream_size : response.body.size();
    m_stream.expires_after(transfer_time(size));
    const auto written = [self = shared_from_this(), keep_alive, body](beast::error_code ec,
                                                                       std::size_t) {
      self->on_written(ec, keep_alive, body);
    };
    m_stream_owner = response.stream_owner;
    if (m_is_head ||
        (response.has_stream && response.stream_data == nullptr && !response.stream_reader)) {
      auto out = std::make_shared<http::response<http::empty_body>>();
      fill_head(*out, response, keep_alive);
      out->content_length(size);
      m_answer = out;
      http::async_write(m_stream, *out, written);
      return;
    }
    if (response.has_stream && response.stream_reader) {
      answer_incrementally(std::move(response), keep_alive, body);
      return;
    }
    if (response.has_stream) {
      auto out = std::make_shared<http::response<http::span_body<const char>>>();
      fill_head(*out, response, keep_alive);
      out->body() = {response.stream_data, static_cast<std::size_t>(response.stream_size)};
      out->prepare_payload();
      m_answer = out;
      http::async_write(m_stream, *out, written);
      return;
    }
    auto out = std::make_shared<http::response<http::string_body>>();
    fill_head(*out, response, keep_alive);
    out->body() = std::move(response.body);
    out->prepare_payload();
    m_answer = out;
    http::async_write(m_stream, *out, written);
  }

  // A body made while it is sent: the head, then one buffer at a time from the reader, so
  // only k_write_block bytes of it are ever in memory. A reader that fails after the head
  // went out can only end the connection: the client sees a short body.
  struct IncrementalAnswer {
    http::response<http::buffer_body> message;
    std::optional<http::response_serializer<http::buffer_body>> serializer;
    std::function<HubExpected<std::size_t>(char*, std::size_t)> reader;
    std::vector<char> buffer;
  };

  void answer_incrementally(HttpResponse response, bool keep_alive, BodyState body) {
    auto state = std::make_shared<IncrementalAnswer>();
    fill_head(state->message, response, keep_alive);
    state->message.content_length(response.stream_size);
    state->message.body().data = nullptr;
    state->message.body().more = true;
    state->reader = std::move(response.stream_reader);
    state->buffer.resize(k_write_block);
    state->serializer.emplace(state->message);
    m_answer = state;
    http::async_write_header(
        m_stream, *state->serializer,
        [self = shared_from_this(), state, keep_alive, body](beast::error_code ec, std::size_t) {
          if (ec) {
            self->on_written(ec, keep_alive, body);
            return;
          }
          self->write_next_block(state, keep_alive, body);
        });
  }

  void write_next_block(const std::shared_ptr<IncrementalAnswer>& state, bool keep_alive,
                        BodyState body) {
    const auto n = state->reader(state->buffer.data(), state->buffer.size());
    if (!n) {
      on_written(beast::error_code(asio::error::broken_pipe), keep_alive, body);
      return;
    }
    auto& chunk = state->message.body();
    chunk.data = *n > 0 ? state->buffer.data() : nullptr;
    chunk.size = *n;
    chunk.more = *n > 0;
    http::async_write(
        m_stream, *state->serializer,
        [self = shared_from_this(), state, keep_alive, body](beast::error_code ec, std::size_t) {
          if (ec == http::error::need_buffer) {
            ec = {};
          }
          if (ec || state->serializer->is_done()) {
            self->on_written(ec, keep_alive, body);
            return;
          }
          self->write_next_block(state, keep_alive, body);
        });
  }

  void on_written(beast::error_code ec, bool keep_alive, BodyState body) {
    m_answer.reset();
    m_stream_owner.reset();
    m_spool.reset();
    m_string_body.reset();
    m_file_body.reset();
    m_request = HttpRequest{};
    if (ec) {
      close();
      return;
    }
    if (keep_alive) {
      m_first_request = false;
      read_head();
      return;
    }
    if (body == BodyState::unread) {
      linger();
      return;
    }
    close();
  }

  void linger() {
    beast::error_code ignored;
    m_stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    m_stream.expires_after(k_linger_time);
    m_buffer.consume(m_buffer.size());
    drain();
  }

  void drain() {
    m_stream.async_read_some(m_buffer.prepare(k_read_chunk),
                             [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                               self->m_drained += n;
                               if (ec || self->m_drained > k_linger_bytes) {
                                 self->close();
                                 return;
                               }
                               self->drain();
                             });
  }

  void close() {
    beast::error_code ignored;
    m_stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    m_stream.close();
  }

  beast::tcp_stream m_stream;
  ServerState& m_state;
  std::string m_peer;
  beast::flat_buffer m_buffer;
  std::optional<http::request_parser<http::empty_body>> m_head;
  std::optional<http::request_parser<http::string_body>> m_string_body;
  std::optional<http::request_parser<http::file_body>> m_file_body;
  HubRouter::BodyPlan m_body_plan;
  std::uint64_t m_body_length = 0;
  SpoolFile m_spool;
  HttpRequest m_request;
  unsigned m_version = 11;
  bool m_keep_alive = false;
  bool m_is_head = false;
  bool m_first_request = true;
  std::size_t m_drained = 0;
  // The answer being written and what its bytes belong to, alive until the write ends.
  std::shared_ptr<void> m_answer;
  std::shared_ptr<const void> m_stream_owner;
};

constexpr std::string_view k_too_many =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    "Connection: close\r\nContent-Length: 53\r\n\r\n"
    "{\"error\":\"too many connections from this address\"}\r\n";

// Accepts on the first io_context and hands each connection to the next one in turn.
class Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(std::vector<std::unique_ptr<asio::io_context>>& contexts, tcp::acceptor& acceptor,
           ServerState& state)
      : m_contexts(contexts),
        m_acceptor(acceptor),
        m_state(state),
        m_backoff(acceptor.get_executor()) {}

  void accept() {
    asio::io_context& next = *m_contexts[m_next++ % m_contexts.size()];
    m_acceptor.async_accept(next.get_executor(), [self = shared_from_this()](
                                                     beast::error_code ec, tcp::socket socket) {
      self->on_accept(ec, std::move(socket));
    });
  }

 private:
  void on_accept(beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !m_acceptor.is_open()) {
      return;
    }
    if (ec) {
      // Out of descriptors (EMFILE) or memory: wait a little instead of spinning on accept.
      m_backoff.expires_after(k_accept_backoff);
      m_backoff.async_wait([self = shared_from_this()](beast::error_code) { self->accept(); });
      return;
    }
    beast::error_code peer_ec;
    const auto remote = socket.remote_endpoint(peer_ec);
    const std::string peer = peer_ec ? std::string("?") : remote.address().to_string();
    if (!m_state.connections.try_add(peer)) {
      // A fresh socket's send buffer is empty, so this short answer never blocks.
      socket.non_blocking(true, peer_ec);
      socket.write_some(asio::buffer(k_too_many.data(), k_too_many.size()), peer_ec);
      socket.shutdown(tcp::socket::shutdown_both, peer_ec);
      socket.close(peer_ec);
    } else {
      // Small answers leave at once rather than wait for the client's delayed ACK.
      socket.set_option(tcp::no_delay(true), peer_ec);
      std::make_shared<Session>(std::move(socket), m_state, peer)->start();
    }
    accept();
  }

  std::vector<std::unique_ptr<asio::io_context>>& m_contexts;
  std::size_t m_next = 0;  // only the accepting thread touches it
  tcp::acceptor& m_acceptor;
  ServerState& m_state;
  asio::steady_timer m_backoff;
};

// 1,000 slow clients need 1,000 descriptors: take what the hard limit allows.
void raise_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace

util::Expected<void> serve(ServerSettings settings, const ListenAddress& address,
                           const std::function<void(const std::string& url)>& on_listening,
                           const std::function<void(const std::string& message)>& log) {
  raise_descriptor_limit();
  const std::size_t threads = std::max<std::size_t>(settings.threads, 1);
  const ServerLimits limits = settings.limits;
  const fs::path spool_dir = settings.root / ".kernelhub-spool";
  // Before anything under the root is touched: a second server must not clear the first's
  // spool or temporary objects.
  const RootLock lock = KH_TRY(RootLock::acquire(settings.root));
  HubRouter router(std::move(settings));
  const auto leftovers = router.store().remove_leftovers();
  if (leftovers.count > 0) {
    log(fmt::format("removed {} leftover temporary file(s) of an earlier run ({} bytes)",
                    leftovers.count, leftovers.bytes));
  }
  std::error_code fs_ec;
  // Bodies spooled by a run that was killed are dropped with their folder.
  fs::remove_all(spool_dir, fs_ec);
  fs::create_directories(spool_dir, fs_ec);
  if (fs_ec) {
    return util::fail(fmt::format("cannot create \"{}\": {}", spool_dir.string(),
                                  fs_ec.message()));
  }
  router.watch_settings(k_settings_check_interval, log);
  ConnectionCounter connections(limits.max_connections, limits.max_connections_per_peer);
  ServerState state{router, limits, connections, spool_dir, ""};

  // One io_context per thread, each connection on one of them: no lock is shared between
  // threads on the hot path (one io_context run by 64 threads served a third of the requests
  // per second, bench/hub/server_README.md). A handler that takes long (a large commit) delays
  // only the connections of its own context. Declared after everything their handlers point
  // at, so they are destroyed (with the sessions their pending handlers own) first.
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  for (std::size_t i = 0; i < threads; ++i) {
    contexts.push_back(std::make_unique<asio::io_context>(1));
  }
  // The acceptor and the signals have a context of their own, run by this thread, which
  // serves no connection: a new connection is taken as soon as it arrives, however busy the
  // loops serving the others are. (Issue 20 item 7: when the first loop also accepted, 400
  // large downloads starting at once kept new connections waiting seconds behind that loop's
  // own downloads, while the other loops, waiting for connections, sat idle.)
  asio::io_context accept_io(1);
  tcp::acceptor acceptor(accept_io);
  beast::error_code ec;
  const auto ip = asio::ip::make_address(address.host, ec);
  if (ec) {
    return util::fail(fmt::format("cannot listen on \"{}\": not an IP address", address.host));
  }
  const tcp::endpoint endpoint(ip, static_cast<unsigned short>(address.port));
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) {
    acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    acceptor.bind(endpoint, ec);
  }
  if (!ec) {
    acceptor.listen(asio::socket_base::max_listen_connections, ec);
  }
  if (ec) {
    return util::fail(fmt::format("cannot listen on {}:{}: {}", address.host, address.port,
                                  ec.message()));
  }
  const auto bound = acceptor.local_endpoint();
  const std::string host = bound.address().is_v6() ? fmt::format("[{}]", address.host)
                                                   : address.host;
  const std::string base_url = fmt::format("http://{}:{}", host, bound.port());
  state.fallback_base = base_url;

  asio::signal_set signals(accept_io, SIGINT, SIGTERM, SIGHUP);
  std::function<void(beast::error_code, int)> on_signal = [&](beast::error_code signal_ec,
                                                               int number) {
    if (signal_ec) {
      return;
    }
    if (number == SIGHUP) {
      const auto reloaded = router.reload(HubRouter::Reload::always);
      log(reloaded ? "settings reloaded (SIGHUP)" : "error: " + reloaded.error().message);
      signals.async_wait(on_signal);
      return;
    }
    // Stop at once: connections waiting on clients are simply dropped; a handler already
    // running (a commit) finishes its git work before its thread leaves run().
    beast::error_code ignored;
    acceptor.close(ignored);
    for (auto& context : contexts) {
      context->stop();
    }
    accept_io.stop();
  };
  signals.async_wait(on_signal);

  std::make_shared<Listener>(contexts, acceptor, state)->accept();
  on_listening(base_url);

  // Contexts with no connection yet must not return from run(): each keeps a work guard
  // until stop().
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
  for (auto& context : contexts) {
    guards.push_back(asio::make_work_guard(*context));
  }
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (auto& context : contexts) {
    pool.emplace_back([&context = *context] { context.run(); });
  }
  accept_io.run();
  for (auto& thread : pool) {
    thread.join();
  }
  fs::remove_all(spool_dir, fs_ec);
  return {};
}

}  // namespace kernelhub::server
