// SPDX-License-Identifier: Apache-2.0
// The caching rules as pure functions: If-None-Match and If-Range parsing and comparison
// (RFC 9110 §13.1), the Cache-Control each kind of answer gets, the 304 made from a 200, and
// the router's default for answers no handler marked.
#include <kernelhub/server/cache_policy.hpp>

#include <gtest/gtest.h>

namespace kernelhub::server {

namespace {

std::string header(const HttpResponse& response, std::string_view name) {
  return std::string(response_header(response, name).value_or(""));
}

HttpRequest get(std::vector<std::pair<std::string, std::string>> headers = {}) {
  HttpRequest request;
  request.method = "GET";
  request.target = "/org/k/resolve/main/a";
  request.headers = std::move(headers);
  return request;
}

}  // namespace

TEST(CachePolicy, IfNoneMatchComparesWeaklyAcrossAList) {
  const std::string etag = "\"abc\"";
  EXPECT_TRUE(none_match("\"abc\"", etag));
  EXPECT_TRUE(none_match("W/\"abc\"", etag));  // weak comparison ignores W/
  EXPECT_TRUE(none_match("\"x\", \"abc\"", etag));
  EXPECT_TRUE(none_match("\"x\",W/\"abc\" , \"y\"", etag));
  EXPECT_TRUE(none_match(" , \"abc\"", etag));  // empty list elements are allowed
  EXPECT_TRUE(none_match("*", etag));
  EXPECT_TRUE(none_match(" * ", etag));
  // Commas belong to an opaque tag: "a,b" is one tag.
  EXPECT_TRUE(none_match("\"a,b\"", "\"a,b\""));
  EXPECT_FALSE(none_match("\"a,b\"", "\"a\""));
  EXPECT_FALSE(none_match("\"abcd\"", etag));
  EXPECT_FALSE(none_match("abc", etag));          // unquoted: malformed
  EXPECT_FALSE(none_match("\"x\" \"abc\"", etag));  // no comma between tags
  EXPECT_FALSE(none_match("\"abc", etag));
  EXPECT_FALSE(none_match("", etag));
  EXPECT_FALSE(none_match("\"abc\"", "abc"));  // our own tag must be a valid one
}

TEST(CachePolicy, IfRangeHonoursRangeOnlyForTheSameStrongTag) {
  EXPECT_EQ(effective_range(get({{"range", "bytes=1-"}}), "\"abc\""), "bytes=1-");
  EXPECT_EQ(effective_range(get({{"range", "bytes=1-"}, {"if-range", "\"abc\""}}), "\"abc\""),
            "bytes=1-");
  EXPECT_FALSE(effective_range(get({{"range", "bytes=1-"}, {"if-range", "\"other\""}}), "\"abc\""));
  EXPECT_FALSE(effective_range(get({{"range", "bytes=1-"}, {"if-range", "W/\"abc\""}}), "\"abc\""));
  EXPECT_FALSE(effective_range(
      get({{"range", "bytes=1-"}, {"if-range", "Sun, 06 Nov 1994 08:49:37 GMT"}}), "\"abc\""));
  EXPECT_FALSE(effective_range(get({{"if-range", "\"abc\""}}), "\"abc\""));
}

TEST(CachePolicy, LifetimeIsImmutableOnlyForTheCommitItself) {
  const std::string sha(40, 'a');
  EXPECT_EQ(lifetime_of(sha, sha), Lifetime::immutable);
  EXPECT_EQ(lifetime_of("main", sha), Lifetime::revision);
  EXPECT_EQ(lifetime_of("v1", sha), Lifetime::revision);
  EXPECT_EQ(lifetime_of("", ""), Lifetime::revision);
}

TEST(CachePolicy, EachAudienceAndLifetimeGetsItsCacheControl) {
  HttpResponse immutable;
  mark_cacheable(immutable, "abc", Audience::everyone, Lifetime::immutable,
                 std::chrono::seconds(5));
  EXPECT_EQ(header(immutable, "ETag"), "\"abc\"");
  EXPECT_EQ(header(immutable, "Cache-Control"), "public, max-age=31536000, immutable");

  HttpResponse branch;
  mark_cacheable(branch, "abc", Audience::everyone, Lifetime::revision, std::chrono::seconds(5));
  EXPECT_EQ(header(branch, "Cache-Control"), "public, max-age=5");
  HttpResponse always;
  mark_cacheable(always, "abc", Audience::everyone, Lifetime::revision, std::chrono::seconds(0));
  EXPECT_EQ(header(always, "Cache-Control"), "public, no-cache");

  HttpResponse secret;
  mark_cacheable(secret, "abc", Audience::token_holder, Lifetime::immutable,
                 std::chrono::seconds(5));
  EXPECT_EQ(header(secret, "Cache-Control"), "private, no-cache");
  EXPECT_EQ(header(secret, "ETag"), "\"abc\"");

  HttpResponse redirect;
  mark_cacheable(redirect, "", Audience::everyone, Lifetime::immutable, std::chrono::seconds(5));
  EXPECT_FALSE(response_header(redirect, "ETag"));
  HttpResponse signed_redirect;
  mark_uncacheable(signed_redirect);
  EXPECT_EQ(header(signed_redirect, "Cache-Control"), "private, no-store");
}

TEST(CachePolicy, FinishingGivesDefaultsAndVaryToAllButPublicAnswers) {
  HttpResponse plain = json_response(200, {{"a", 1}});
  finish_caching(get(), plain, /*cookie_counts=*/false);
  EXPECT_EQ(header(plain, "Cache-Control"), "no-cache");
  EXPECT_EQ(header(plain, "Vary"), "Authorization");

  HttpResponse with_token = json_response(200, {{"a", 1}});
  finish_caching(get({{"authorization", "Bearer t"}}), with_token, true);
  EXPECT_EQ(header(with_token, "Cache-Control"), "private, no-cache");
  EXPECT_EQ(header(with_token, "Vary"), "Authorization, Cookie");

  HttpResponse cookie = json_response(200, {{"a", 1}});
  cookie.set_header("Set-Cookie", "s=1");
  finish_caching(get(), cookie, true);
  EXPECT_EQ(header(cookie, "Cache-Control"), "private, no-store");

  HttpResponse error = error_response(HubError{404, "RepoNotFound", "no"});
  finish_caching(get(), error, false);
  EXPECT_EQ(header(error, "Cache-Control"), "no-cache");
  EXPECT_EQ(header(error, "Vary"), "Authorization");

  HttpResponse open;
  mark_cacheable(open, "abc", Audience::everyone, Lifetime::immutable, std::chrono::seconds(5));
  finish_caching(get({{"authorization", "Bearer t"}}), open, true);
  EXPECT_FALSE(response_header(open, "Vary"));
  EXPECT_EQ(header(open, "Cache-Control"), "public, max-age=31536000, immutable");
}

TEST(CachePolicy, MatchingIfNoneMatchTurnsA2xxInto304KeepingItsHeaders) {
  HttpResponse full;
  full.status = 206;
  full.content_type = "application/octet-stream";
  mark_cacheable(full, "abc", Audience::token_holder, Lifetime::immutable, std::chrono::seconds(5));
  full.set_header("X-Repo-Commit", "123");
  full.set_header("Content-Range", "bytes 1-2/3");
  full.has_stream = true;
  full.stream_size = 2;
  finish_caching(get({{"if-none-match", "\"x\""}, {"if-none-match", "\"abc\""}}), full, false);
  EXPECT_EQ(full.status, 304);
  EXPECT_FALSE(full.has_stream);
  EXPECT_TRUE(full.body.empty());
  EXPECT_EQ(header(full, "ETag"), "\"abc\"");
  EXPECT_EQ(header(full, "Cache-Control"), "private, no-cache");
  EXPECT_EQ(header(full, "Vary"), "Authorization");
  EXPECT_EQ(header(full, "X-Repo-Commit"), "123");
  EXPECT_FALSE(response_header(full, "Content-Range"));

  // Not a 2xx, not a read, or no ETag: the answer stands.
  HttpResponse missing = error_response(HubError{404, "", "no"});
  missing.set_header("ETag", "\"abc\"");
  finish_caching(get({{"if-none-match", "*"}}), missing, false);
  EXPECT_EQ(missing.status, 404);
  HttpRequest post = get({{"if-none-match", "*"}});
  post.method = "POST";
  HttpResponse written;
  written.set_header("ETag", "\"abc\"");
  finish_caching(post, written, false);
  EXPECT_EQ(written.status, 200);
  HttpResponse untagged;
  finish_caching(get({{"if-none-match", "*"}}), untagged, false);
  EXPECT_EQ(untagged.status, 200);
}

}  // namespace kernelhub::server
