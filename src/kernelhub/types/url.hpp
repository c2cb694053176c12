// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kernelhub::types {

// A URL as the WHATWG URL Standard's basic parser reads it without a base URL. The reference
// validates git URLs with Rust's `url` crate, which follows that standard, and shows the
// serialised form to Python; matching it needs the same parser, not RFC 3986.
//
// Not implemented: the UTS #46 mapping of non-ASCII domain labels (they are lowercased in
// ASCII only, then Punycode-encoded), and Windows drive letters in file URLs.
struct Url {
  std::string scheme;  // lowercase, without the ':'
  std::string username;
  std::string password;
  std::optional<std::string> host;  // serialised: domain, IPv4, "[IPv6]" or opaque host
  std::optional<std::uint16_t> port;  // absent when it is the scheme's default
  bool has_opaque_path = false;  // "mailto:x": the path is one string, not segments
  std::vector<std::string> path;
  std::optional<std::string> query;
  std::optional<std::string> fragment;

  // The href: what the reference's `Url::as_str()` returns.
  std::string serialize() const;

  friend bool operator==(const Url&, const Url&) = default;
};

// Returns nullopt where the standard's parser returns failure.
std::optional<Url> parse_url(std::string_view input);

// http, https, ws, wss, ftp and file: the schemes with hosts, default ports and `\` as a slash.
bool is_special_scheme(std::string_view scheme);

}  // namespace kernelhub::types
