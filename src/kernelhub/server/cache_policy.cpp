// SPDX-License-Identifier: Apache-2.0
// Why the rules are what they are:
// - Content by full commit id and LFS objects by sha256 never change, so public ones are
//   `immutable` for a year (RFC 8246): a proxy in front of the hub then asks it once per file.
//   huggingface.co answers a resolve with ETag = the git blob id and 304 on If-None-Match
//   (hub-api.md §2.4; huggingface/huggingface.js#1713), so the ETag stays that id here: it
//   also names the blob in huggingface_hub's cache, which is why it cannot carry the commit.
// - By branch or tag the answer changes when the ref moves: a short max-age (config.toml's
//   `[http] branch-max-age`) bounds how stale a cache may be, and the ETag makes the
//   revalidation a 304 when the file did not change.
// - A private repository's answers depend on the token: `private` keeps them out of shared
//   caches (nginx's proxy_cache stores nothing marked private, no-cache or no-store), and
//   `Vary` keeps a browser from reusing one account's answer for another. The 404 that hides
//   a private repository from an anonymous client varies the same way, so a cache never hands
//   it to a client that holds a token, nor the file to one that does not.
#include <kernelhub/server/cache_policy.hpp>

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace kernelhub::server {

namespace {

// RFC 9111 §5.2.2.1 advises a year as the longest max-age worth sending.
constexpr long long k_year_seconds = 31536000;

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool is_ows(char c) { return c == ' ' || c == '\t'; }

// One entity tag at the start of `text` (RFC 9110 §8.8.3: [W/] DQUOTE *etagc DQUOTE, etagc
// being any visible character but DQUOTE): its opaque part with the quotes, and whether it is
// weak; `text` is left after it. Nullopt when `text` does not start with one.
struct EntityTag {
  std::string_view opaque;
  bool weak = false;
};

std::optional<EntityTag> take_entity_tag(std::string_view& text) {
  EntityTag tag;
  if (text.starts_with("W/")) {
    tag.weak = true;
    text.remove_prefix(2);
  }
  if (text.empty() || text.front() != '"') {
    return std::nullopt;
  }
  const std::size_t close = text.find('"', 1);
  if (close == std::string_view::npos) {
    return std::nullopt;
  }
  for (std::size_t i = 1; i < close; ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x21 || byte == 0x7f) {
      return std::nullopt;
    }
  }
  tag.opaque = text.substr(0, close + 1);
  text.remove_prefix(close + 1);
  return tag;
}

std::string joined_fields(const HttpRequest& request, std::string_view lower_name) {
  std::string joined;
  for (const auto& [name, value] : request.headers) {
    if (name == lower_name) {
      joined += (joined.empty() ? "" : ", ") + value;
    }
  }
  return joined;
}

bool carries_credentials(const HttpRequest& request, bool cookie_counts) {
  return request.header("authorization").has_value() ||
         (cookie_counts && request.header("cookie").has_value());
}

}  // namespace

Lifetime lifetime_of(std::string_view revision, std::string_view sha) {
  return !sha.empty() && revision == sha ? Lifetime::immutable : Lifetime::revision;
}

void mark_cacheable(HttpResponse& response, std::string_view id, Audience audience,
                    Lifetime lifetime, std::chrono::seconds branch_max_age) {
  if (!id.empty()) {
    response.set_header("ETag", fmt::format("\"{}\"", id));
  }
  if (audience == Audience::token_holder) {
    response.set_header("Cache-Control", "private, no-cache");
    return;
  }
  if (lifetime == Lifetime::immutable) {
    response.set_header("Cache-Control",
                        fmt::format("public, max-age={}, immutable", k_year_seconds));
    return;
  }
  response.set_header("Cache-Control",
                      branch_max_age.count() > 0
                          ? fmt::format("public, max-age={}", branch_max_age.count())
                          : std::string("public, no-cache"));
}

void mark_uncacheable(HttpResponse& response) {
  response.set_header("Cache-Control", "private, no-store");
}

std::string credential_vary(bool cookie_counts) {
  return cookie_counts ? "Authorization, Cookie" : "Authorization";
}

void finish_caching(const HttpRequest& request, HttpResponse& response, bool cookie_counts) {
  const auto cache_control = response_header(response, "Cache-Control");
  if (!cache_control) {
    // An answer that sets a cookie is that browser's alone, and never worth keeping.
    response.set_header("Cache-Control", response_header(response, "Set-Cookie")
                                             ? "private, no-store"
                                         : carries_credentials(request, cookie_counts)
                                             ? "private, no-cache"
                                             : "no-cache");
  }
  const bool is_public = cache_control && cache_control->starts_with("public");
  if (!is_public && !response_header(response, "Vary")) {
    response.set_header("Vary", credential_vary(cookie_counts));
  }
  if (request.method != "GET" && request.method != "HEAD") {
    return;
  }
  const auto etag = response_header(response, "ETag");
  if (response.status / 100 != 2 || !etag) {
    // RFC 9110 §13.2.1: preconditions only apply to what would otherwise be a 2xx.
    return;
  }
  const std::string field = joined_fields(request, "if-none-match");
  if (!field.empty() && none_match(field, *etag)) {
    response = not_modified(response);
  }
}

bool none_match(std::string_view field, std::string_view etag) {
  std::string_view ours = etag;
  const auto own = take_entity_tag(ours);
  if (!own) {
    return false;
  }
  std::string_view text = field;
  const auto skip_separators = [&] {
    while (!text.empty() && (is_ows(text.front()) || text.front() == ',')) {
      text.remove_prefix(1);
    }
  };
  skip_separators();
  if (text == "*" || (text.starts_with('*') && std::all_of(text.begin() + 1, text.end(), is_ows))) {
    return true;  // any current representation: every answer that reaches here has one
  }
  while (!text.empty()) {
    const auto tag = take_entity_tag(text);
    if (!tag) {
      return false;
    }
    if (tag->opaque == own->opaque) {
      return true;
    }
    while (!text.empty() && is_ows(text.front())) {
      text.remove_prefix(1);
    }
    if (!text.empty() && text.front() != ',') {
      return false;
    }
    skip_separators();
  }
  return false;
}

HttpResponse not_modified(const HttpResponse& full) {
  HttpResponse answer;
  answer.status = 304;
  answer.content_type = full.content_type;
  for (const auto& [name, value] : full.headers) {
    // The representation's own framing (its length, the range of a 206) is not sent again.
    if (!equals_ignoring_case(name, "Content-Range") &&
        !equals_ignoring_case(name, "Content-Length")) {
      answer.headers.emplace_back(name, value);
    }
  }
  return answer;
}

std::optional<std::string_view> effective_range(const HttpRequest& request,
                                                std::string_view etag) {
  const auto range = request.header("range");
  const auto if_range = request.header("if-range");
  if (!range || !if_range) {
    return range;
  }
  std::string_view given = *if_range;
  while (!given.empty() && is_ows(given.front())) {
    given.remove_prefix(1);
  }
  while (!given.empty() && is_ows(given.back())) {
    given.remove_suffix(1);
  }
  std::string_view ours = etag;
  const auto own = take_entity_tag(ours);
  const auto tag = take_entity_tag(given);
  // Strong comparison: neither weak, the same opaque tag, and nothing after it.
  if (own && tag && given.empty() && !own->weak && !tag->weak && own->opaque == tag->opaque) {
    return range;
  }
  return std::nullopt;
}

std::optional<std::string_view> response_header(const HttpResponse& response,
                                                std::string_view name) {
  for (const auto& [key, value] : response.headers) {
    if (equals_ignoring_case(key, name)) {
      return std::string_view(value);
    }
  }
  return std::nullopt;
}

}  // namespace kernelhub::server
