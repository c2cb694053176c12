// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <compare>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/util/expected.hpp>

namespace kernelhub::variants {

// The release part of a Python `packaging.version.Version` ("12.8", "26.0.1"), which is how
// the loader holds every version it compares or prints. Unlike types::Version it keeps the
// number of components it was written with, because the loader's messages print "13.0", not
// "13"; comparison ignores trailing zeros, as packaging does. Components are unbounded
// decimal numbers kept as digit strings without leading zeros, so a variant name with an
// absurdly long number still parses the way the reference parses it.
class ReleaseVersion {
 public:
  ReleaseVersion() = default;

  // "12.8", "6.3.42131": one or more dot-separated ASCII digit runs; leading zeros dropped.
  // Errors: "invalid version \"x\"".
  static util::Expected<ReleaseVersion> parse(std::string_view text);
  // major.minor from two digit runs, as the name regexes capture them ("2", "010" -> 2.10).
  static ReleaseVersion from_parts(std::string_view major, std::string_view minor);

  bool empty() const { return m_components.empty(); }
  std::size_t size() const { return m_components.size(); }
  // Component `index`, "0" when absent (packaging's `.minor` of "13" is 0).
  const std::string& component(std::size_t index) const;
  const std::string& major() const { return component(0); }
  const std::string& minor() const { return component(1); }

  // The components joined with dots, as written minus leading zeros: "13.0", "2.10".
  std::string to_string() const;
  // First two components without the dot, as variant names spell versions: 12.8 -> "128".
  std::string flattened() const;

  friend std::strong_ordering operator<=>(const ReleaseVersion& a, const ReleaseVersion& b);
  friend bool operator==(const ReleaseVersion& a, const ReleaseVersion& b) {
    return (a <=> b) == std::strong_ordering::equal;
  }

 private:
  std::vector<std::string> m_components;
};

// Numeric comparison of two digit strings without leading zeros.
std::strong_ordering compare_digits(std::string_view a, std::string_view b);
// `text` with its leading zeros removed ("0" stays "0"); `text` must be ASCII digits.
std::string strip_leading_zeros(std::string_view text);
// True when `text` is one or more ASCII digits.
bool is_digits(std::string_view text);

}  // namespace kernelhub::variants
