// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/request_target.hpp>

#include <algorithm>
#include <cctype>

namespace kernelhub::server {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::optional<std::string_view> RequestTarget::param(std::string_view name) const {
  for (const auto& [key, value] : query) {
    if (key == name) {
      return std::string_view(value);
    }
  }
  return std::nullopt;
}

bool RequestTarget::flag(std::string_view name) const {
  const auto value = param(name);
  return value && (iequals(*value, "true") || *value == "1");
}

std::optional<std::string> percent_decode(std::string_view text, PlusMeans plus) {
  if (text.find('%') == std::string_view::npos &&
      (plus == PlusMeans::plus || text.find('+') == std::string_view::npos)) {
    return std::string(text);  // most segments: nothing to decode
  }
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) {
        return std::nullopt;
      }
      const int high = hex_value(text[i + 1]);
      const int low = hex_value(text[i + 2]);
      if (high < 0 || low < 0) {
        return std::nullopt;
      }
      out.push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else if (c == '+' && plus == PlusMeans::space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string percent_encode(std::string_view text, Slash slash) {
  static constexpr char k_hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) != 0 || c == '_' || c == '.' || c == '~' || c == '-' ||
        (c == '/' && slash == Slash::keep)) {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(k_hex[byte >> 4]);
      out.push_back(k_hex[byte & 0xf]);
    }
  }
  return out;
}

HubExpected<RequestTarget> parse_request_target(std::string_view target) {
  RequestTarget result;
  const std::size_t question = target.find('?');
  const std::string_view path = target.substr(0, question);
  result.path = std::string(path);
  std::size_t start = path.starts_with('/') ? 1 : 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    auto decoded = percent_decode(path.substr(start, end - start), PlusMeans::plus);
    if (!decoded || decoded->find('\0') != std::string::npos) {
      return bad_request("malformed request path: bad percent escape or NUL byte");
    }
    result.segments.push_back(std::move(*decoded));
    start = end + 1;
  }
  // "/" alone gives one empty segment; drop it so the index page has no segments.
  if (result.segments.size() == 1 && result.segments.front().empty()) {
    result.segments.clear();
  }
  if (question == std::string_view::npos) {
    return result;
  }
  std::string_view query = target.substr(question + 1);
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) {
      continue;
    }
    const std::size_t eq = pair.find('=');
    auto key = percent_decode(pair.substr(0, eq), PlusMeans::space);
    auto value = percent_decode(
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1),
        PlusMeans::space);
    if (!key || !value) {
      return bad_request("malformed query string: bad percent escape");
    }
    result.query.emplace_back(std::move(*key), std::move(*value));
  }
  return result;
}

}  // namespace kernelhub::server
