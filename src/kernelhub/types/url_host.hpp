// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>

// Host parsing of the WHATWG URL Standard, split from the URL state machine (url.cpp).
namespace kernelhub::types::url_host {

enum class Kind { special, opaque };

// Parses and serialises a host: "[v6]" as compressed IPv6, a domain of a special URL (percent
// decoded, lowercased, IDNA-encoded, numbers read as IPv4), or an opaque host of another
// scheme (kept as written, percent-encoding controls and non-ASCII). nullopt on failure.
std::optional<std::string> parse_host(std::string_view input, Kind kind);

// Percent-encodes the bytes of `input` that `in_set` selects (and every non-ASCII byte).
template <typename Predicate>
std::string percent_encode(std::string_view input, Predicate in_set) {
  static constexpr char k_hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(input.size());
  for (const char c : input) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte > 0x7E || in_set(c)) {
      out += '%';
      out += k_hex[byte >> 4];
      out += k_hex[byte & 0xF];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace kernelhub::types::url_host
