// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to the server layer: the bridge between Beast's parser and RequestHead, shared by the
// socket transport (http_session.cpp) and parse_request_head (the fuzzer's entry), so both read
// a head the same way. Only files that already know Beast include it.

#include <boost/beast/http.hpp>

#include <kernelhub/server/request_head.hpp>

namespace kernelhub::server::detail {

using HeadParser = boost::beast::http::request_parser<boost::beast::http::empty_body>;

// A parser set up as the server reads heads: `max_head_bytes` for the line and headers, and no
// body limit yet (the router's plan sets it once the head is read, so a write without a token
// gets 401 rather than a 413 from the parser).
void prepare_head_parser(HeadParser& parser, std::size_t max_head_bytes);

// The refusal for a parser error while reading a head (431 or 400).
HubError head_error(const boost::beast::error_code& error, std::size_t max_head_bytes);

// The head a finished parser holds.
RequestHead describe_head(const HeadParser& parser, const std::string& fallback_base);

}  // namespace kernelhub::server::detail
