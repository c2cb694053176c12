// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/types/version.hpp>

#include <charconv>

#include <fmt/format.h>

namespace kernelhub::types {

Version::Version(std::vector<std::uint64_t> components) : m_components(std::move(components)) {
  while (!m_components.empty() && m_components.back() == 0) {
    m_components.pop_back();
  }
}

util::Expected<Version> Version::parse(std::string_view text) {
  if (text.empty()) {
    return util::fail("empty version string");
  }
  std::vector<std::uint64_t> components;
  std::size_t start = 0;
  while (true) {
    const auto dot = text.find('.', start);
    const auto part = text.substr(start, dot == std::string_view::npos ? text.npos : dot - start);
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || error != std::errc() || end != part.data() + part.size()) {
      return util::fail(fmt::format("version must consist of numbers: \"{}\"", text));
    }
    components.push_back(value);
    if (dot == std::string_view::npos) {
      break;
    }
    start = dot + 1;
  }
  return Version(std::move(components));
}

std::uint64_t Version::component(std::size_t index) const {
  return index < m_components.size() ? m_components[index] : 0;
}

std::string Version::to_string() const {
  if (m_components.empty()) {
    return "0";
  }
  return fmt::format("{}", fmt::join(m_components, "."));
}

std::string Version::flattened() const {
  return fmt::format("{}{}", major(), minor());
}

}  // namespace kernelhub::types
