// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include <kernelhub/server/http_message.hpp>

namespace kernelhub::server {

// How HTTP caches (a browser's, a shared proxy such as nginx's proxy_cache, a CDN) may keep
// the server's answers (issue 23 §2; RFC 9111 §5.2 for Cache-Control, RFC 9110 §13 for the
// conditional requests). The handlers mark the answers they know to be cacheable; the router
// gives every other answer the default and turns a matching If-None-Match into a 304.

// Who may be given a stored copy: anyone (a public repository), or only the client whose
// credentials fetched it (a private one: no shared cache may keep it).
enum class Audience { everyone, token_holder };

// How long an answer stays true: forever (it was asked for by full commit id, or names an LFS
// object by its sha256), or as long as a branch or tag still points where it did.
enum class Lifetime { immutable, revision };

// The lifetime of an answer for `revision`, resolved to commit `sha`: immutable only when
// the client named the commit itself (a tag or branch may move).
Lifetime lifetime_of(std::string_view revision, std::string_view sha);

// Marks a 2xx answer of content identified by `id` (a git object id or an LFS sha256, sent
// quoted as a strong ETag, RFC 9110 §8.8.3):
//   everyone, immutable:  Cache-Control: public, max-age=31536000, immutable
//   everyone, revision:   Cache-Control: public, max-age=<branch_max_age> (no-cache at 0)
//   token_holder:         Cache-Control: private, no-cache (every use is checked again, and
//                         a revalidation costs a 304), Vary on the credentials
// An empty `id` sends no ETag (a redirect, whose own payload is not the file).
void mark_cacheable(HttpResponse& response, std::string_view id, Audience audience,
                    Lifetime lifetime, std::chrono::seconds branch_max_age);

// Marks an answer no cache may keep: a redirect to a signed, expiring URL of a private object.
void mark_uncacheable(HttpResponse& response);

// The request headers an answer that depends on the caller's credentials varies on:
// Authorization, and Cookie where a browser session counts (reads outside /api).
std::string credential_vary(bool cookie_counts);

// The router's last step for every answer: one without a Cache-Control of its own gets
// `no-cache` (`private, no-cache` when the request carried credentials, `private, no-store`
// when it sets a cookie), and every answer that is not public gets `Vary` on the
// credentials, so no cache hands one client's answer (a private file, or the 404 that hides
// it) to another. Then a GET or HEAD whose If-None-Match matches a 2xx answer's ETag gets
// that answer as a 304.
void finish_caching(const HttpRequest& request, HttpResponse& response, bool cookie_counts);

// RFC 9110 §13.1.2: whether an If-None-Match field value (a list of entity tags, or `*`)
// matches `etag` (quoted, as sent) by weak comparison. A malformed list matches nothing.
bool none_match(std::string_view field, std::string_view etag);

// The 304 a client holding `full`'s representation gets: no body, and the headers a 200
// would have carried that a cache updates its copy with (RFC 9110 §15.4.5).
HttpResponse not_modified(const HttpResponse& full);

// The Range header to honour, given If-Range (RFC 9110 §13.1.5): none when If-Range is
// present and is not `etag` by strong comparison (a date never matches: no Last-Modified is
// sent), so the client gets the whole current file rather than a part of another one.
std::optional<std::string_view> effective_range(const HttpRequest& request,
                                                std::string_view etag);

// A response header's value (names compared without case), or nullopt.
std::optional<std::string_view> response_header(const HttpResponse& response,
                                                std::string_view name);

}  // namespace kernelhub::server
