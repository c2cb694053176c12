// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/types/version.hpp>

#include <array>
#include <charconv>

#include <fmt/format.h>

namespace kernelhub::types {

namespace {

// Rust's `str::trim`: the Unicode White_Space characters, here as UTF-8 sequences.
constexpr std::array<std::string_view, 25> k_white_space = {
    "\t", "\n", "\v", "\f", "\r", " ", "\u0085", "\u00a0", "\u1680", "\u2000", "\u2001",
    "\u2002", "\u2003", "\u2004", "\u2005", "\u2006", "\u2007", "\u2008", "\u2009", "\u200a",
    "\u2028", "\u2029", "\u202f", "\u205f", "\u3000"};

std::string_view trim_white_space(std::string_view text) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (const auto space : k_white_space) {
      if (text.starts_with(space)) {
        text.remove_prefix(space.size());
        changed = true;
      }
      if (text.ends_with(space)) {
        text.remove_suffix(space.size());
        changed = true;
      }
    }
  }
  return text;
}

// Rust's `usize::from_str`: an optional '+', then at least one decimal digit, no overflow.
bool parse_component(std::string_view part, std::uint64_t& value) {
  if (part.starts_with('+')) {
    part.remove_prefix(1);
  }
  const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
  return !part.empty() && error == std::errc() && end == part.data() + part.size();
}

}  // namespace

Version::Version(std::vector<std::uint64_t> components) : m_components(std::move(components)) {
  while (!m_components.empty() && m_components.back() == 0) {
    m_components.pop_back();
  }
}

util::Expected<Version> Version::parse(std::string_view original) {
  // The reference trims the whole string, but not the parts between dots.
  const auto text = trim_white_space(original);
  if (text.empty()) {
    return util::fail("empty version string");
  }
  std::vector<std::uint64_t> components;
  std::size_t start = 0;
  while (true) {
    const auto dot = text.find('.', start);
    const auto part = text.substr(start, dot == std::string_view::npos ? text.npos : dot - start);
    std::uint64_t value = 0;
    if (!parse_component(part, value)) {
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
