// SPDX-License-Identifier: Apache-2.0
// Start-up and signals of `kernelhub serve`: lock the root, clear a killed run's leftovers and
// spool, bind, accept, run one event loop per thread, stop on SIGINT/SIGTERM and reload the
// settings on SIGHUP. A connection's life cycle is http_session.hpp's Session. Asio and Beast
// stay in this file, the http_session*.cpp files and request_head.cpp (Beast's head parser,
// shared with fuzz/).
//
// Why not cpp-httplib (used until issue 12): it gives every connection a pool thread and reads
// with blocking calls, so 32 idle keep-alive sockets or 40 clients dripping one header byte at
// a time held every thread and locked everyone else out, SIGTERM waited on them, and it read
// a whole body before any handler could look at the token. Here a connection waiting for bytes
// holds no thread: each one is a socket, a parser and a deadline on one of the threads'
// event loops, and a thread is busy only while it runs a handler.
#include <kernelhub/server/http_server.hpp>

#include <sys/resource.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <fmt/format.h>

#include <kernelhub/server/connection_counter.hpp>
#include <kernelhub/server/http_session.hpp>
#include <kernelhub/server/hub_router.hpp>
#include <kernelhub/server/root_lock.hpp>

namespace kernelhub::server {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace fs = std::filesystem;
using tcp = asio::ip::tcp;
using detail::ServerState;
using detail::Session;

// How often a request may look at config.toml's and the token file's stamps.
constexpr std::chrono::milliseconds k_settings_check_interval{1000};
// When accept() fails for want of descriptors, try again after this rather than spin.
constexpr std::chrono::milliseconds k_accept_backoff{50};

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
