// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/variants/release_version.hpp>

#include <algorithm>

#include <fmt/format.h>

namespace kernelhub::variants {

namespace {

const std::string k_zero = "0";

}  // namespace

bool is_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string strip_leading_zeros(std::string_view text) {
  const auto first = text.find_first_not_of('0');
  return first == std::string_view::npos ? k_zero : std::string(text.substr(first));
}

std::strong_ordering compare_digits(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return a.size() <=> b.size();
  }
  const int order = a.compare(b);
  return order == 0 ? std::strong_ordering::equal
                    : (order < 0 ? std::strong_ordering::less : std::strong_ordering::greater);
}

util::Expected<ReleaseVersion> ReleaseVersion::parse(std::string_view text) {
  ReleaseVersion version;
  std::size_t start = 0;
  while (true) {
    const auto dot = text.find('.', start);
    const auto part = text.substr(start, dot == std::string_view::npos ? text.npos : dot - start);
    if (!is_digits(part)) {
      return util::fail(fmt::format("invalid version \"{}\"", text));
    }
    version.m_components.push_back(strip_leading_zeros(part));
    if (dot == std::string_view::npos) {
      return version;
    }
    start = dot + 1;
  }
}

ReleaseVersion ReleaseVersion::from_parts(std::string_view major, std::string_view minor) {
  ReleaseVersion version;
  version.m_components = {strip_leading_zeros(major), strip_leading_zeros(minor)};
  return version;
}

const std::string& ReleaseVersion::component(std::size_t index) const {
  return index < m_components.size() ? m_components[index] : k_zero;
}

std::string ReleaseVersion::to_string() const { return fmt::format("{}", fmt::join(m_components, ".")); }

std::string ReleaseVersion::flattened() const { return major() + minor(); }

std::strong_ordering operator<=>(const ReleaseVersion& a, const ReleaseVersion& b) {
  // Missing components count as zero, so "26" == "26.0" < "26.0.1".
  const auto count = std::max(a.m_components.size(), b.m_components.size());
  for (std::size_t i = 0; i < count; ++i) {
    const auto order = compare_digits(a.component(i), b.component(i));
    if (order != std::strong_ordering::equal) {
      return order;
    }
  }
  return std::strong_ordering::equal;
}

}  // namespace kernelhub::variants
