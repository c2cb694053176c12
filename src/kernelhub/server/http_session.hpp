// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to the server layer, and to the files that already know Asio and Beast
// (http_server.cpp, http_session.cpp, http_session_answer.cpp): one HTTP/1.1 connection of
// `kernelhub serve`. A connection waiting for bytes holds no thread: each one is a socket, a
// parser and a deadline on one of the server's event loops, and a thread is busy only while it
// runs a handler.
//
// The life cycle, in http_session.cpp: wait (idle_timeout) for a request, read its head
// (head_timeout, max_head_bytes), ask HubRouter::admit from the head alone whether to read a
// body and how much (so a write without a token is refused before any body byte), send 100
// Continue when asked, read the body into memory or spool it to a file (SpoolFile) within
// transfer_time, run the router's handler, answer, and again while the client keeps the
// connection alive. After an answer whose body was left unread the framing is unknown: the
// connection is closed, lingering a moment so the client can read the answer first.
// Writing the answer (a string, a mapped span, a file sent with sendfile(2), or a body made
// while it is sent) is in http_session_answer.cpp.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <kernelhub/server/connection_counter.hpp>
#include <kernelhub/server/hub_router.hpp>
#include <kernelhub/server/spool_file.hpp>

namespace kernelhub::server::detail {

// What every connection shares; outlives them all (serve() destroys the io_contexts first).
struct ServerState {
  HubRouter& router;
  ServerLimits limits;
  ConnectionCounter& connections;
  std::filesystem::path spool_dir;
  std::string fallback_base;
};

// One connection. Every step runs on the thread of the connection's io_context and under a
// deadline of beast::tcp_stream, which closes the socket when it passes.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(boost::asio::ip::tcp::socket socket, ServerState& state, std::string peer)
      : m_stream(std::move(socket)), m_state(state), m_peer(std::move(peer)) {}

  ~Session() { m_state.connections.remove(m_peer); }

  void start() {
    // Sends are tried at once and finished by the event loop if the socket is full
    // (http_session_answer.cpp): a send on a blocking socket would hold the thread instead.
    boost::beast::error_code ignored;
    m_stream.socket().non_blocking(true, ignored);
    read_head();
  }

 private:
  enum class BodyState { read, unread };
  struct IncrementalAnswer;
  struct FileAnswer;

  // The deadline for sending or receiving `bytes`: transfer_timeout plus the time at
  // min_rate_bytes per second.
  std::chrono::seconds transfer_time(std::uint64_t bytes) const;

  // http_session.cpp: the request.
  void read_head();
  void read_rest_of_head();
  void on_head(boost::beast::error_code ec);
  void read_body();
  void on_body(boost::beast::error_code ec);
  void handle();
  // A transport-level refusal: the request cannot be trusted, so the connection ends.
  void refuse(int status, std::string message);
  void on_written(boost::beast::error_code ec, bool keep_alive, BodyState body);
  void linger();
  void drain();
  void close();

  // http_session_answer.cpp: the answer.
  template <typename Body>
  void fill_head(boost::beast::http::response<Body>& out, const HttpResponse& response,
                 bool keep_alive);
  void answer(HttpResponse response, BodyState body);
  void answer_incrementally(HttpResponse response, bool keep_alive, BodyState body);
  void write_next_block(const std::shared_ptr<IncrementalAnswer>& state, bool keep_alive,
                        BodyState body);
  void answer_from_file(HttpResponse response, bool keep_alive, BodyState body);
  void send_file_part(const std::shared_ptr<FileAnswer>& state, bool keep_alive, BodyState body);

  boost::beast::tcp_stream m_stream;
  ServerState& m_state;
  std::string m_peer;
  boost::beast::flat_buffer m_buffer;
  std::optional<boost::beast::http::request_parser<boost::beast::http::empty_body>> m_head;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>>
      m_string_body;
  std::optional<boost::beast::http::request_parser<boost::beast::http::file_body>> m_file_body;
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
  // An answer's head and string body while they are sent; kept between answers so their
  // memory is reused.
  std::string m_head_text;
  std::string m_body_text;
};

}  // namespace kernelhub::server::detail
