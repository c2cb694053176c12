// SPDX-License-Identifier: Apache-2.0
// The head parser the socket transport uses, on byte strings: framing a proxy might read
// otherwise is refused, and what the router's admit needs is there before any body byte.
#include <kernelhub/server/request_head.hpp>

#include <gtest/gtest.h>

namespace kernelhub::server {

namespace {

constexpr std::size_t k_limit = 64 << 10;

HubExpected<RequestHead> parse(std::string_view bytes) {
  return parse_request_head(bytes, k_limit, "http://fallback:1");
}

}  // namespace

TEST(RequestHead, ReadsLineHeadersAndFraming) {
  const auto head = parse(
      "POST /api/kernels/org/k/commit/main?create_pr=0 HTTP/1.1\r\nHost: hub:8\r\n"
      "Authorization: Bearer t\r\nContent-Length: 12\r\nExpect: 100-Continue\r\n\r\n"
      "body bytes..");
  ASSERT_TRUE(head) << head.error().message;
  EXPECT_EQ(head->request.method, "POST");
  EXPECT_EQ(head->request.target, "/api/kernels/org/k/commit/main?create_pr=0");
  EXPECT_EQ(head->request.header("authorization"), "Bearer t");
  EXPECT_EQ(head->request.base_url, "http://hub:8");
  EXPECT_TRUE(head->request.body.empty());
  EXPECT_TRUE(head->has_body);
  EXPECT_EQ(head->content_length, 12u);
  EXPECT_TRUE(head->expect_continue);
  EXPECT_TRUE(head->keep_alive);
}

TEST(RequestHead, ChunkedHasABodyOfUnknownLength) {
  const auto head =
      parse("POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n");
  ASSERT_TRUE(head) << head.error().message;
  EXPECT_TRUE(head->has_body);
  EXPECT_FALSE(head->content_length);
}

TEST(RequestHead, GetWithoutHostUsesTheFallbackAndHttp10ClosesByDefault) {
  const auto head = parse("HEAD / HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(head) << head.error().message;
  EXPECT_EQ(head->request.base_url, "http://fallback:1");
  EXPECT_FALSE(head->has_body);
  EXPECT_TRUE(head->is_head);
  EXPECT_FALSE(head->keep_alive);
  EXPECT_EQ(head->version, 10u);
}

TEST(RequestHead, SameContentLengthTwiceIsOneLength) {
  const auto head = parse("POST /x HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n");
  ASSERT_TRUE(head) << head.error().message;
  EXPECT_EQ(head->content_length, 5u);
}

TEST(RequestHead, AmbiguousFramingIsRefused) {
  // Issue 12 item 3: two different lengths were accepted (the first won), -5 got no answer.
  for (const std::string_view bad : {
           "POST /x HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n",
           "POST /x HTTP/1.1\r\nContent-Length: 2, 5\r\n\r\n",
           "POST /x HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
           "POST /x HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n",
           "POST /x HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
           "POST /x HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
           "GET /x HTTP/1.1\r\nBad Header: x\r\n\r\n",
           "GET /x HTTP/1.1\r\nX: a\rb\r\n\r\n",
           "GET /x HTTP/2.0\r\n\r\n",
           "GET\r\n\r\n",
       }) {
    const auto head = parse(bad);
    EXPECT_FALSE(head) << bad;
    if (!head) {
      EXPECT_EQ(head.error().status, 400) << bad;
    }
  }
}

TEST(RequestHead, OversizedAndIncompleteHeads) {
  const std::string big = "GET / HTTP/1.1\r\nX: " + std::string(k_limit, 'a') + "\r\n\r\n";
  const auto oversized = parse(big);
  ASSERT_FALSE(oversized);
  EXPECT_EQ(oversized.error().status, 431);
  for (const std::string_view cut : {"", "GET / HTTP/1.1\r\nHost: x\r\n", "GET / HT"}) {
    const auto head = parse(cut);
    ASSERT_FALSE(head) << cut;
    EXPECT_EQ(head.error().status, 400);
  }
}

}  // namespace kernelhub::server
