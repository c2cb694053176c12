// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <kernelhub/server/hub_error.hpp>

namespace kernelhub::server {

// A request target split the way the Hub protocol needs: the raw path is split on `/` first
// and each part decoded after, so a `%2F` in a revision stays inside its segment.
struct RequestTarget {
  std::string path;                    // the raw path, still encoded
  std::vector<std::string> segments;   // decoded; the leading `/` gives no empty segment
  std::vector<std::pair<std::string, std::string>> query;

  // The first value of a query parameter.
  std::optional<std::string_view> param(std::string_view name) const;
  // A query boolean: `true`, `True` and `1` are true (httpx and requests spell them apart).
  bool flag(std::string_view name) const;
};

// Fails on a malformed `%` escape or a decoded NUL (400).
HubExpected<RequestTarget> parse_request_target(std::string_view target);

// Decodes %XX escapes; `+` stays `+` in paths and becomes a space in queries. nullopt on a
// malformed escape.
enum class PlusMeans { plus, space };
std::optional<std::string> percent_decode(std::string_view text, PlusMeans plus);

// Encodes everything outside [A-Za-z0-9_.~-], and `/` too unless `keep_slash` (Python's
// quote(path) and quote(path, safe="")).
enum class Slash { keep, encode };
std::string percent_encode(std::string_view text, Slash slash);

}  // namespace kernelhub::server
