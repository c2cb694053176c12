// SPDX-License-Identifier: Apache-2.0
// A connection's life cycle (see http_session.hpp): reading the head and the body under their
// deadlines, the router's admit and handle, keep-alive, lingering and closing.
#include <kernelhub/server/http_session.hpp>

#include <algorithm>
#include <exception>

#include <fmt/format.h>

#include <kernelhub/server/beast_request_head.hpp>

namespace kernelhub::server::detail {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// After an answer to a request whose body was not read (a refused write), the connection is
// closed; the bytes the client is still sending are read and dropped for a short while first,
// so the close does not reset the connection before the client has read the answer.
constexpr std::chrono::seconds k_linger_time{2};
constexpr std::size_t k_linger_bytes = std::size_t{1} << 20;
constexpr std::size_t k_read_chunk = 16 << 10;

}  // namespace

std::chrono::seconds Session::transfer_time(std::uint64_t bytes) const {
  const auto& limits = m_state.limits;
  const std::uint64_t rate = std::max<std::uint64_t>(limits.min_rate_bytes, 1);
  return limits.transfer_timeout + std::chrono::seconds(bytes / rate);
}

void Session::read_head() {
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

void Session::read_rest_of_head() {
  if (m_buffer.size() > 0) {
    // Usually the whole head came with the first read: parsed here, it needs no deadline
    // (arming one is a system call on a loop serving one connection) and no queued handler.
    // The parser stops after the head, as async_read_header's does, leaving a body's bytes
    // in the buffer.
    m_head->eager(false);
    beast::error_code ec;
    const std::size_t used = m_head->put(m_buffer.data(), ec);
    m_buffer.consume(used);
    if (ec == http::error::need_more) {
      ec = {};  // the rest is read below, under the head's deadline
    }
    if (ec || m_head->is_header_done()) {
      on_head(ec);
      return;
    }
  }
  m_stream.expires_after(m_state.limits.head_timeout);
  http::async_read_header(m_stream, m_buffer, *m_head,
                          [self = shared_from_this()](beast::error_code ec, std::size_t) {
                            self->on_head(ec);
                          });
}

void Session::on_head(beast::error_code ec) {
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

void Session::read_body() {
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

void Session::on_body(beast::error_code ec) {
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

void Session::handle() {
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
void Session::refuse(int status, std::string message) {
  m_keep_alive = false;
  answer(error_response(HubError{status, "", std::move(message)}), BodyState::unread);
}

void Session::on_written(beast::error_code ec, bool keep_alive, BodyState body) {
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
    if (m_buffer.size() > 0) {
      // Pipelined requests already here are parsed and answered without waiting, each from
      // the loop's queue: calling read_head from here would nest a frame per request.
      asio::post(m_stream.get_executor(), [self = shared_from_this()] { self->read_head(); });
      return;
    }
    read_head();
    return;
  }
  if (body == BodyState::unread) {
    linger();
    return;
  }
  close();
}

void Session::linger() {
  beast::error_code ignored;
  m_stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  m_stream.expires_after(k_linger_time);
  m_buffer.consume(m_buffer.size());
  drain();
}

void Session::drain() {
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

void Session::close() {
  beast::error_code ignored;
  m_stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  m_stream.close();
}

}  // namespace kernelhub::server::detail
