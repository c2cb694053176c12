// SPDX-License-Identifier: Apache-2.0
// Writing a connection's answer (see http_session.hpp): the head alone for HEAD, a string
// body, a span of bytes another object owns (a pooled blob), a file's bytes sent by the kernel
// (an LFS object), or a body made while it is sent (a large loose blob inflated block by
// block), each under a deadline that grows with its size.
#include <kernelhub/server/http_session.hpp>
#include <kernelhub/util/sigpipe_guard.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <iterator>
#include <string_view>
#include <vector>

#include <sys/sendfile.h>

#include <fmt/format.h>

namespace kernelhub::server::detail {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

// A body made while it is sent goes out in blocks of this size.
constexpr std::size_t k_write_block = std::size_t{256} << 10;
// A file's bytes go out at most this many per turn of the event loop, so one fast reader
// does not keep the loop from the other connections on it.
constexpr std::uint64_t k_sendfile_turn = std::uint64_t{4} << 20;

// The fields that frame an answer, which only the transport writes (names are
// case-insensitive).
bool is_framing_field(std::string_view name) {
  const auto same = [name](std::string_view framing) {
    return name.size() == framing.size() &&
           std::equal(name.begin(), name.end(), framing.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) ==
                    std::tolower(static_cast<unsigned char>(y));
           });
  };
  return same("Content-Type") || same("Content-Length") || same("Connection") ||
         same("Transfer-Encoding");
}

// What Beast's serializer wrote for fill_head plus a Content-Length (as prepare_payload set
// it), made in one string the connection keeps: the status line, the handler's fields in
// their order, Content-Type, the Connection field keep-alive needs for the request's version
// (RFC 9112 §9.3: HTTP/1.1 keeps a connection unless told to close, HTTP/1.0 closes it
// unless told to keep it) and the length when there is one. The framing fields are the
// transport's: a handler's own (none sets them) would not be sent.
void write_head(std::string& out, const HttpResponse& response, unsigned version,
                bool keep_alive, std::optional<std::uint64_t> length) {
  out.clear();
  const bool old = version == 10;
  out += old ? "HTTP/1.0 " : "HTTP/1.1 ";
  fmt::format_to(std::back_inserter(out), "{:03d} ", response.status);
  const auto reason = http::obsolete_reason(static_cast<http::status>(response.status));
  out.append(reason.data(), reason.size());
  out += "\r\n";
  for (const auto& [name, value] : response.headers) {
    if (is_framing_field(name)) {
      continue;
    }
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
  }
  out += "Content-Type: ";
  out += response.content_type;
  out += "\r\n";
  if (old && keep_alive) {
    out += "Connection: keep-alive\r\n";
  } else if (!old && !keep_alive) {
    out += "Connection: close\r\n";
  }
  if (length) {
    fmt::format_to(std::back_inserter(out), "Content-Length: {}\r\n", *length);
  }
  out += "\r\n";
}

}  // namespace

// A body made while it is sent: the head, then one buffer at a time from the reader, so
// only k_write_block bytes of it are ever in memory. A reader that fails after the head
// went out can only end the connection: the client sees a short body.
struct Session::IncrementalAnswer {
  http::response<http::buffer_body> message;
  std::optional<http::response_serializer<http::buffer_body>> serializer;
  std::function<HubExpected<std::size_t>(char*, std::size_t)> reader;
  std::vector<char> buffer;
};

// A file sent by the kernel: the head, then sendfile(2) on the non-blocking socket whenever it
// can take bytes. The socket is waited on directly (not through the tcp_stream, whose
// deadline covers only its own operations), so the answer has its own deadline that closes the
// socket: a reader that stops reading is cut off as with the other answers.
struct Session::FileAnswer {
  explicit FileAnswer(const boost::asio::any_io_executor& executor) : deadline(executor) {}
  http::response<http::empty_body> head;
  int fd = -1;
  std::uint64_t offset = 0;
  std::uint64_t left = 0;
  boost::asio::steady_timer deadline;
};

template <typename Body>
void Session::fill_head(http::response<Body>& out, const HttpResponse& response, bool keep_alive) {
  out.result(static_cast<unsigned>(response.status));
  out.version(m_version == 10 ? 10 : 11);
  for (const auto& [name, value] : response.headers) {
    out.insert(name, value);
  }
  out.set(http::field::content_type, response.content_type);
  out.keep_alive(keep_alive);
}

void Session::answer(HttpResponse response, BodyState body) {
  // An unread body leaves the connection's framing unknown: answer, then close.
  const bool keep_alive = m_keep_alive && body == BodyState::read;
  m_stream_owner = response.stream_owner;
  // A HEAD and a 304 are heads alone, made below with the other small answers.
  const bool head_only = m_is_head || response.status == 304;
  if (!head_only && response.has_stream && response.stream_fd >= 0 && response.stream_size > 0) {
    m_stream.expires_after(transfer_time(response.stream_size));
    answer_from_file(std::move(response), keep_alive, body);
    return;
  }
  if (!head_only && response.has_stream && response.stream_reader) {
    m_stream.expires_after(transfer_time(response.stream_size));
    answer_incrementally(std::move(response), keep_alive, body);
    return;
  }
  // The head alone (HEAD, a 304, a length without the bytes), a string, or a span of bytes
  // another object owns (a pooled blob).
  const std::uint64_t size = response.has_stream ? response.stream_size : response.body.size();
  // A 304 has no body and no Content-Length: one of 0 would tell a cache that the file it
  // holds is empty (RFC 9110 §8.6).
  const bool not_modified = response.status == 304;
  asio::const_buffer payload;
  if (!m_is_head && !not_modified) {
    if (!response.has_stream) {
      m_body_text = std::move(response.body);
      payload = asio::buffer(m_body_text);
    } else if (response.stream_data != nullptr) {
      payload = asio::buffer(response.stream_data, static_cast<std::size_t>(size));
    }
  }
  write_head(m_head_text, response, m_version, keep_alive,
             not_modified ? std::nullopt : std::optional<std::uint64_t>(size));
  const std::array<asio::const_buffer, 2> buffers{asio::buffer(m_head_text), payload};
  // Most answers fit the socket's send buffer: sent now, with no deadline to arm (a timer
  // change is a system call on a loop serving one connection) and no handler to queue.
  beast::error_code ec;
  std::size_t sent = 0;
  if (m_stream.socket().non_blocking()) {  // never a send that waits (see start())
    sent = m_stream.socket().send(buffers, 0, ec);
  }
  if (ec == asio::error::would_block || ec == asio::error::try_again) {
    ec = {};
  }
  const std::size_t total = asio::buffer_size(buffers);
  if (ec || sent == total) {
    m_body_text.clear();
    on_written(ec, keep_alive, body);
    return;
  }
  // The rest under a deadline that grows with its size, as the client reads it.
  m_stream.expires_after(transfer_time(total - sent));
  const std::size_t head_left = sent < m_head_text.size() ? m_head_text.size() - sent : 0;
  const std::array<asio::const_buffer, 2> rest{
      asio::buffer(m_head_text) + (m_head_text.size() - head_left),
      payload + (sent - (m_head_text.size() - head_left))};
  asio::async_write(m_stream, rest,
                    [self = shared_from_this(), keep_alive, body](beast::error_code write_ec,
                                                                  std::size_t) {
                      self->m_body_text.clear();
                      self->on_written(write_ec, keep_alive, body);
                    });
}

void Session::answer_incrementally(HttpResponse response, bool keep_alive, BodyState body) {
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

void Session::write_next_block(const std::shared_ptr<IncrementalAnswer>& state, bool keep_alive,
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

void Session::answer_from_file(HttpResponse response, bool keep_alive, BodyState body) {
  auto state = std::make_shared<FileAnswer>(m_stream.get_executor());
  fill_head(state->head, response, keep_alive);
  state->head.content_length(response.stream_size);
  state->fd = response.stream_fd;
  state->offset = response.stream_offset;
  state->left = response.stream_size;
  state->deadline.expires_after(transfer_time(response.stream_size));
  m_answer = state;
  state->deadline.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (!ec) {
      beast::error_code ignored;
      self->m_stream.socket().close(ignored);
    }
  });
  http::async_write(m_stream, state->head,
                    [self = shared_from_this(), state, keep_alive, body](beast::error_code ec,
                                                                         std::size_t) {
                      if (ec) {
                        state->deadline.cancel();
                        self->on_written(ec, keep_alive, body);
                        return;
                      }
                      self->send_file_part(state, keep_alive, body);
                    });
}

void Session::send_file_part(const std::shared_ptr<FileAnswer>& state, bool keep_alive,
                             BodyState body) {
  auto& socket = m_stream.socket();
  beast::error_code ec;
  if (!socket.is_open()) {
    ec = asio::error::timed_out;
  } else {
    socket.native_non_blocking(true, ec);
  }
  std::uint64_t this_turn = 0;
  // sendfile(2) takes no MSG_NOSIGNAL: a reader that hung up would end the server by SIGPIPE.
  const util::SigpipeGuard no_sigpipe;
  while (!ec && state->left > 0 && this_turn < k_sendfile_turn) {
    auto offset = static_cast<off_t>(state->offset);
    const auto want = static_cast<std::size_t>(std::min(state->left, k_sendfile_turn - this_turn));
    const ssize_t n = ::sendfile(socket.native_handle(), state->fd, &offset, want);
    if (n > 0) {
      state->offset += static_cast<std::uint64_t>(n);
      state->left -= static_cast<std::uint64_t>(n);
      this_turn += static_cast<std::uint64_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      break;
    } else {
      // The file ended before its announced size, or the socket failed: the client sees a
      // short body, as when a reader fails after the head.
      ec = n == 0 ? asio::error::broken_pipe : beast::error_code(errno, beast::system_category());
    }
  }
  if (ec || state->left == 0) {
    state->deadline.cancel();
    on_written(ec, keep_alive, body);
    return;
  }
  socket.async_wait(asio::ip::tcp::socket::wait_write,
                    [self = shared_from_this(), state, keep_alive, body](beast::error_code ec) {
                      if (ec) {
                        state->deadline.cancel();
                        self->on_written(ec, keep_alive, body);
                        return;
                      }
                      self->send_file_part(state, keep_alive, body);
                    });
}

}  // namespace kernelhub::server::detail
