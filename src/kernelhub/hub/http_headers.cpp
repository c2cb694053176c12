// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/http_transport.hpp>

#include <strings.h>

namespace kernelhub::hub {

void HttpHeaders::add(std::string name, std::string value) {
  m_entries.emplace_back(std::move(name), std::move(value));
}

std::optional<std::string> HttpHeaders::get(std::string_view name) const {
  for (const auto& [key, value] : m_entries) {
    if (key.size() == name.size() && strncasecmp(key.data(), name.data(), name.size()) == 0) {
      const auto first = value.find_first_not_of(" \t\r\n");
      if (first == std::string::npos) {
        return std::string();
      }
      const auto last = value.find_last_not_of(" \t\r\n");
      return value.substr(first, last - first + 1);
    }
  }
  return std::nullopt;
}

}  // namespace kernelhub::hub
