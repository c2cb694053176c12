// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/types/url_host.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include <fmt/format.h>
#include <kernelhub/util/ascii.hpp>

namespace kernelhub::types::url_host {

namespace {

int hex_value(char c) {
  return util::is_ascii_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : c - 'A' + 10;
}
char to_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

bool is_forbidden_host_char(char c) {
  static constexpr std::string_view k_forbidden{"\0\t\n\r #/:<>?@[\\]^|", 17};
  return k_forbidden.find(c) != std::string_view::npos;
}

bool is_forbidden_domain_char(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return is_forbidden_host_char(c) || byte <= 0x1F || c == '%' || byte == 0x7F;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const auto end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? text.npos : end - start));
    if (end == std::string_view::npos) {
      return parts;
    }
    start = end + 1;
  }
}

// The standard's "IPv4 number parser": decimal, 0x-hex or 0-octal; saturates far above 2^32.
std::optional<std::uint64_t> parse_ipv4_number(std::string_view text) {
  if (text.empty()) {
    return std::nullopt;
  }
  unsigned radix = 10;
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    radix = 16;
    text.remove_prefix(2);
  } else if (text.size() >= 2 && text[0] == '0') {
    radix = 8;
    text.remove_prefix(1);
  }
  std::uint64_t value = 0;
  for (const char c : text) {
    const bool valid = radix == 16 ? util::is_ascii_hex(c)
                                   : (util::is_ascii_digit(c) && (radix == 10 || c < '8'));
    if (!valid) {
      return std::nullopt;
    }
    value = std::min<std::uint64_t>(value * radix + static_cast<unsigned>(hex_value(c)),
                                    std::uint64_t{1} << 40);
  }
  return value;
}

bool ends_in_a_number(std::string_view domain) {
  auto parts = split(domain, '.');
  if (parts.back().empty()) {
    if (parts.size() == 1) {
      return false;
    }
    parts.pop_back();
  }
  const auto last = parts.back();
  if (!last.empty() && std::all_of(last.begin(), last.end(), util::is_ascii_digit)) {
    return true;
  }
  return parse_ipv4_number(last).has_value();
}

std::optional<std::string> parse_ipv4(std::string_view domain) {
  auto parts = split(domain, '.');
  if (parts.back().empty() && parts.size() > 1) {
    parts.pop_back();
  }
  if (parts.size() > 4) {
    return std::nullopt;
  }
  std::vector<std::uint64_t> numbers;
  for (const auto part : parts) {
    auto number = parse_ipv4_number(part);
    if (!number) {
      return std::nullopt;
    }
    numbers.push_back(*number);
  }
  for (std::size_t i = 0; i + 1 < numbers.size(); ++i) {
    if (numbers[i] > 255) {
      return std::nullopt;
    }
  }
  if (numbers.back() >= (std::uint64_t{1} << (8 * (5 - numbers.size())))) {
    return std::nullopt;
  }
  std::uint64_t address = numbers.back();
  for (std::size_t i = 0; i + 1 < numbers.size(); ++i) {
    address += numbers[i] << (8 * (3 - i));
  }
  return fmt::format("{}.{}.{}.{}", (address >> 24) & 0xFF, (address >> 16) & 0xFF,
                     (address >> 8) & 0xFF, address & 0xFF);
}

std::optional<std::array<std::uint16_t, 8>> parse_ipv6(std::string_view input) {
  std::array<std::uint16_t, 8> address{};
  std::size_t piece = 0;
  std::optional<std::size_t> compress;
  std::size_t i = 0;
  const auto at = [&](std::size_t index) { return index < input.size() ? input[index] : '\0'; };
  const auto eof = [&] { return i >= input.size(); };
  if (at(0) == ':') {
    if (at(1) != ':') {
      return std::nullopt;
    }
    i = 2;
    compress = ++piece;
  }
  while (!eof()) {
    if (piece == 8) {
      return std::nullopt;
    }
    if (at(i) == ':') {
      if (compress) {
        return std::nullopt;
      }
      ++i;
      compress = ++piece;
      continue;
    }
    unsigned value = 0;
    std::size_t length = 0;
    while (length < 4 && !eof() && util::is_ascii_hex(at(i))) {
      value = value * 16 + static_cast<unsigned>(hex_value(at(i)));
      ++i;
      ++length;
    }
    if (at(i) == '.' && !eof()) {
      // An embedded IPv4 address fills the last two pieces.
      if (length == 0 || piece > 6) {
        return std::nullopt;
      }
      i -= length;
      int numbers_seen = 0;
      while (!eof()) {
        if (numbers_seen > 0) {
          if (at(i) != '.' || numbers_seen >= 4) {
            return std::nullopt;
          }
          ++i;
        }
        if (eof() || !util::is_ascii_digit(at(i))) {
          return std::nullopt;
        }
        std::optional<unsigned> v4;
        while (!eof() && util::is_ascii_digit(at(i))) {
          const unsigned digit = static_cast<unsigned>(at(i) - '0');
          if (v4 && *v4 == 0) {
            return std::nullopt;
          }
          v4 = v4 ? *v4 * 10 + digit : digit;
          if (*v4 > 255) {
            return std::nullopt;
          }
          ++i;
        }
        address[piece] = static_cast<std::uint16_t>(address[piece] * 0x100 + *v4);
        ++numbers_seen;
        if (numbers_seen == 2 || numbers_seen == 4) {
          ++piece;
        }
      }
      if (numbers_seen != 4) {
        return std::nullopt;
      }
      break;
    }
    if (!eof() && at(i) == ':') {
      ++i;
      if (eof()) {
        return std::nullopt;
      }
    } else if (!eof()) {
      return std::nullopt;
    }
    address[piece++] = static_cast<std::uint16_t>(value);
  }
  if (compress) {
    auto swaps = piece - *compress;
    piece = 7;
    while (piece != 0 && swaps > 0) {
      std::swap(address[piece], address[*compress + swaps - 1]);
      --piece;
      --swaps;
    }
  } else if (piece != 8) {
    return std::nullopt;
  }
  return address;
}

std::string serialize_ipv6(const std::array<std::uint16_t, 8>& address) {
  // Compress the first longest run of two or more zero pieces.
  std::optional<std::size_t> compress;
  std::size_t best = 1;
  for (std::size_t start = 0; start < 8;) {
    std::size_t end = start;
    while (end < 8 && address[end] == 0) {
      ++end;
    }
    if (end - start > best) {
      best = end - start;
      compress = start;
    }
    start = end == start ? start + 1 : end;
  }
  std::string out;
  bool skipping_zeros = false;
  for (std::size_t index = 0; index < 8; ++index) {
    if (skipping_zeros && address[index] == 0) {
      continue;
    }
    skipping_zeros = false;
    if (compress == index) {
      out += index == 0 ? "::" : ":";
      skipping_zeros = true;
      continue;
    }
    out += fmt::format("{:x}", address[index]);
    if (index != 7) {
      out += ':';
    }
  }
  return out;
}

std::string percent_decode(std::string_view input) {
  std::string out;
  for (std::size_t i = 0; i < input.size(); ++i) {
    if (input[i] == '%' && i + 2 < input.size() + 0 && util::is_ascii_hex(input[i + 1]) &&
        util::is_ascii_hex(input[i + 2])) {
      out += static_cast<char>(hex_value(input[i + 1]) * 16 + hex_value(input[i + 2]));
      i += 2;
    } else {
      out += input[i];
    }
  }
  return out;
}

// UTF-8 to code points; nullopt for malformed input (the standard's decoder would put U+FFFD
// there, which IDNA then rejects).
std::optional<std::vector<char32_t>> decode_utf8(std::string_view text) {
  std::vector<char32_t> out;
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3
                               : (lead >> 3) == 0x1E                 ? 4
                                                                     : 0;
    if (length == 0 || i + length > text.size()) {
      return std::nullopt;
    }
    char32_t cp = length == 1 ? lead : lead & (0x7F >> length);
    for (std::size_t k = 1; k < length; ++k) {
      const auto byte = static_cast<unsigned char>(text[i + k]);
      if ((byte & 0xC0) != 0x80) {
        return std::nullopt;
      }
      cp = (cp << 6) | (byte & 0x3F);
    }
    static constexpr std::array<char32_t, 5> k_min = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < k_min[length] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return std::nullopt;
    }
    out.push_back(cp);
    i += length;
  }
  return out;
}

// RFC 3492 bias adaptation, shared by the encoder and the decoder.
constexpr std::uint32_t k_base = 36, k_tmin = 1, k_tmax = 26;
std::uint32_t adapt(std::uint32_t delta, std::uint32_t points, bool first) {
  delta = first ? delta / 700 : delta / 2;
  delta += delta / points;
  std::uint32_t k = 0;
  while (delta > ((k_base - k_tmin) * k_tmax) / 2) {
    delta /= k_base - k_tmin;
    k += k_base;
  }
  return k + (k_base - k_tmin + 1) * delta / (delta + 38);
}
char encode_digit(std::uint32_t d) { return static_cast<char>(d < 26 ? 'a' + d : '0' + d - 26); }

std::string punycode_encode(const std::vector<char32_t>& input) {
  std::string out;
  for (const auto cp : input) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    }
  }
  const auto basic = static_cast<std::uint32_t>(out.size());
  if (basic > 0) {
    out += '-';
  }
  std::uint32_t n = 128, delta = 0, bias = 72, handled = basic;
  while (handled < input.size()) {
    std::uint32_t m = 0x10FFFF + 1;
    for (const auto cp : input) {
      if (cp >= n && cp < m) {
        m = cp;
      }
    }
    delta += (m - n) * (handled + 1);
    n = m;
    for (const auto cp : input) {
      if (cp < n) {
        ++delta;
      }
      if (cp != n) {
        continue;
      }
      std::uint32_t q = delta;
      for (std::uint32_t k = k_base;; k += k_base) {
        const auto t = k <= bias ? k_tmin : k >= bias + k_tmax ? k_tmax : k - bias;
        if (q < t) {
          break;
        }
        out += encode_digit(t + (q - t) % (k_base - t));
        q = (q - t) / (k_base - t);
      }
      out += encode_digit(q);
      bias = adapt(delta, handled + 1, handled == basic);
      delta = 0;
      ++handled;
    }
    ++delta;
    ++n;
  }
  return out;
}

// Whether an "xn--" label's remainder is valid Punycode (the reference's IDNA rejects it else).
bool is_valid_punycode(std::string_view text) {
  const auto dash = text.rfind('-');
  std::size_t i = dash == std::string_view::npos ? 0 : dash + 1;
  std::uint64_t n = 128, position = 0, bias = 72;
  std::uint64_t length = dash == std::string_view::npos ? 0 : dash;
  if (i >= text.size()) {
    return false;
  }
  while (i < text.size()) {
    const auto old = position;
    std::uint64_t w = 1;
    for (std::uint32_t k = k_base;; k += k_base) {
      if (i >= text.size()) {
        return false;
      }
      const char c = text[i++];
      const std::uint64_t digit = (c >= 'a' && c <= 'z') ? c - 'a' : (c >= '0' && c <= '9') ? c - '0' + 26 : 99;
      if (digit >= k_base) {
        return false;
      }
      position += digit * w;
      const std::uint64_t t = k <= bias ? k_tmin : k >= bias + k_tmax ? k_tmax : k - bias;
      if (digit < t) {
        break;
      }
      w *= k_base - t;
      if (position > 0x10FFFF * 64 || w > 0x10FFFF * 64) {
        return false;
      }
    }
    ++length;
    bias = adapt(static_cast<std::uint32_t>(position - old), static_cast<std::uint32_t>(length),
                 old == 0);
    n += position / length;
    position %= length;
    if (n > 0x10FFFF || (n >= 0xD800 && n <= 0xDFFF)) {
      return false;
    }
    ++position;
  }
  return true;
}

std::optional<std::string> domain_to_ascii(std::string_view domain) {
  const auto code_points = decode_utf8(domain);
  if (!code_points) {
    return std::nullopt;
  }
  std::vector<std::string> labels;
  std::vector<char32_t> label;
  const auto finish_label = [&] {
    const bool ascii = std::all_of(label.begin(), label.end(), [](char32_t c) { return c < 0x80; });
    std::string text;
    if (ascii) {
      for (const auto cp : label) {
        text += to_lower(static_cast<char>(cp));
      }
    } else {
      for (auto& cp : label) {
        cp = cp < 0x80 ? static_cast<char32_t>(to_lower(static_cast<char>(cp))) : cp;
      }
      text = "xn--" + punycode_encode(label);
    }
    labels.push_back(std::move(text));
    label.clear();
  };
  for (const auto cp : *code_points) {
    if (cp == U'.') {
      finish_label();
    } else {
      label.push_back(cp);
    }
  }
  finish_label();
  std::string out;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i].starts_with("xn--") && !is_valid_punycode(std::string_view(labels[i]).substr(4))) {
      return std::nullopt;
    }
    out += (i == 0 ? "" : ".") + labels[i];
  }
  if (out.empty()) {
    return std::nullopt;
  }
  return out;
}

}  // namespace

std::optional<std::string> parse_host(std::string_view input, Kind kind) {
  if (!input.empty() && input.front() == '[') {
    if (input.back() != ']' || input.size() < 2) {
      return std::nullopt;
    }
    const auto address = parse_ipv6(input.substr(1, input.size() - 2));
    if (!address) {
      return std::nullopt;
    }
    return "[" + serialize_ipv6(*address) + "]";
  }
  if (kind == Kind::opaque) {
    if (std::any_of(input.begin(), input.end(), is_forbidden_host_char)) {
      return std::nullopt;
    }
    return percent_encode(input, [](char) { return false; });
  }
  const auto ascii = domain_to_ascii(percent_decode(input));
  if (!ascii || std::any_of(ascii->begin(), ascii->end(), is_forbidden_domain_char)) {
    return std::nullopt;
  }
  if (ends_in_a_number(*ascii)) {
    return parse_ipv4(*ascii);
  }
  return ascii;
}

}  // namespace kernelhub::types::url_host
