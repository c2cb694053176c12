// SPDX-License-Identifier: Apache-2.0
// Writing a connection's answer (see http_session.hpp): the head alone for HEAD, a string
// body, a span of bytes another object owns (a pooled blob), a file's bytes sent by the kernel
// (an LFS object), or a body made while it is sent (a large loose blob inflated block by
// block), each under a deadline that grows with its size.
#include <kernelhub/server/http_session.hpp>

#include <cerrno>
#include <vector>

#include <sys/sendfile.h>

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
  const std::uint64_t size = response.has_stream ? response.stream_size : response.body.size();
  m_stream.expires_after(transfer_time(size));
  const auto written = [self = shared_from_this(), keep_alive, body](beast::error_code ec,
                                                                     std::size_t) {
    self->on_written(ec, keep_alive, body);
  };
  m_stream_owner = response.stream_owner;
  // A 304 has no body and no Content-Length: one of 0 would tell a cache that the file it
  // holds is empty (RFC 9110 §8.6).
  const bool not_modified = response.status == 304;
  if (m_is_head || not_modified ||
      (response.has_stream && response.stream_data == nullptr && !response.stream_reader)) {
    auto out = std::make_shared<http::response<http::empty_body>>();
    fill_head(*out, response, keep_alive);
    if (!not_modified) {
      out->content_length(size);
    }
    m_answer = out;
    http::async_write(m_stream, *out, written);
    return;
  }
  if (response.has_stream && response.stream_fd >= 0 && response.stream_size > 0) {
    answer_from_file(std::move(response), keep_alive, body);
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
