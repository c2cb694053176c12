// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/html.hpp>

#include <array>
#include <ctime>

#include <fmt/format.h>

#include <kernelhub/server/request_target.hpp>

namespace kernelhub::server::web {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string url_part(std::string_view part) { return percent_encode(part, Slash::encode); }

std::string url_path(std::string_view path) { return percent_encode(path, Slash::keep); }

std::string human_size(std::uint64_t bytes) {
  if (bytes < 1000) {
    return fmt::format("{} B", bytes);
  }
  constexpr std::array<const char*, 4> k_units = {"kB", "MB", "GB", "TB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  value /= 1000.0;
  while (value >= 1000.0 && unit + 1 < k_units.size()) {
    value /= 1000.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, k_units[unit]);
}

std::string utc_time(std::int64_t seconds) {
  const std::time_t time = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&time, &utc);
  char text[32] = {};
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M UTC", &utc);
  return text;
}

bool is_text(std::string_view bytes) {
  std::size_t i = 0;
  while (i < bytes.size()) {
    const auto lead = static_cast<unsigned char>(bytes[i]);
    if (lead == 0) {
      return false;
    }
    std::size_t length = 1;
    if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
    } else if (lead >= 0xE0) {
      length = lead <= 0xEF ? 3 : 0;
    } else if (lead >= 0xC2) {
      length = 2;
    } else if (lead >= 0x80) {
      length = 0;  // a continuation byte or an overlong lead where a character must start
    }
    if (length == 0 || i + length > bytes.size()) {
      return false;
    }
    for (std::size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(bytes[i + k]) & 0xC0) != 0x80) {
        return false;
      }
    }
    i += length;
  }
  return true;
}

}  // namespace kernelhub::server::web
