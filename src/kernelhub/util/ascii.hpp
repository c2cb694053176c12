// SPDX-License-Identifier: Apache-2.0
// ASCII character classes for grammars that are ASCII by definition (kernel names, URLs, hex):
// unlike <cctype>, they do not depend on the locale and take a plain char.
#pragma once

namespace kernelhub::util {

constexpr bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_ascii_lower(char c) { return c >= 'a' && c <= 'z'; }
constexpr bool is_ascii_upper(char c) { return c >= 'A' && c <= 'Z'; }
constexpr bool is_ascii_alpha(char c) { return is_ascii_lower(c) || is_ascii_upper(c); }
constexpr bool is_ascii_hex(char c) {
  return is_ascii_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace kernelhub::util
