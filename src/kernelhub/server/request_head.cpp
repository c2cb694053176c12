// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/request_head.hpp>

#include <cctype>
#include <iterator>

#include <fmt/format.h>

#include <kernelhub/server/beast_request_head.hpp>

namespace kernelhub::server {

namespace http = boost::beast::http;

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

namespace detail {

void prepare_head_parser(HeadParser& parser, std::size_t max_head_bytes) {
  parser.header_limit(static_cast<std::uint32_t>(max_head_bytes));
  parser.body_limit(boost::none);
}

HubError head_error(const boost::beast::error_code& error, std::size_t max_head_bytes) {
  if (error == http::error::header_limit) {
    return HubError{431, "", fmt::format("request head larger than {} bytes", max_head_bytes)};
  }
  // A proxy in front may have read a framing the parser refuses otherwise, so nothing of the
  // request is trusted: the transport answers and closes.
  return HubError{400, "", fmt::format("malformed request: {}", error.message())};
}

RequestHead describe_head(const HeadParser& parser, const std::string& fallback_base) {
  const auto& head = parser.get();
  RequestHead out;
  out.version = head.version() == 10 ? 10 : 11;
  out.keep_alive = head.keep_alive();
  out.is_head = head.method() == http::verb::head;
  out.has_body = !parser.is_done();
  if (const auto length = parser.content_length()) {
    out.content_length = *length;
  }
  out.request.method = std::string(head.method_string());
  out.request.target = std::string(head.target());
  out.request.headers.reserve(static_cast<std::size_t>(std::distance(head.begin(), head.end())));
  for (const auto& field : head) {
    out.request.headers.emplace_back(lower(field.name_string()), std::string(field.value()));
  }
  const auto host = head.find(http::field::host);
  out.request.base_url = host == head.end() || host->value().empty()
                             ? fallback_base
                             : "http://" + std::string(host->value());
  const auto expect = head.find(http::field::expect);
  out.expect_continue = expect != head.end() && lower(expect->value()) == "100-continue";
  return out;
}

}  // namespace detail

HubExpected<RequestHead> parse_request_head(std::string_view bytes, std::size_t max_head_bytes,
                                            const std::string& fallback_base) {
  detail::HeadParser parser;
  detail::prepare_head_parser(parser, max_head_bytes);
  // The socket transport reads a head with Beast's async_read_header, which feeds the parser
  // until it reports the header done; put() does the same over a buffer held in full.
  parser.eager(false);
  boost::beast::error_code error;
  std::size_t used = 0;
  while (!parser.is_header_done()) {
    const std::size_t consumed =
        parser.put(boost::asio::buffer(bytes.data() + used, bytes.size() - used), error);
    used += consumed;
    if (error == http::error::need_more) {
      // put() wants the rest of a line it has begun; with no more bytes the head is cut off.
      return tl::unexpected(HubError{400, "", "malformed request: the head is incomplete"});
    }
    if (error) {
      return tl::unexpected(detail::head_error(error, max_head_bytes));
    }
    if (consumed == 0) {
      return tl::unexpected(HubError{400, "", "malformed request: the head is incomplete"});
    }
  }
  return detail::describe_head(parser, fallback_base);
}

}  // namespace kernelhub::server
