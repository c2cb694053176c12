// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/util/expected.hpp>

namespace kernelhub::types {

// A dot-separated list of unsigned integers ("2.12", "12.6", "2025.3.2"). Trailing zero
// components are dropped on parse, so "2.12.0" and "2.12" are the same version, as in the
// reference's kernels-data `Version`.
class Version {
 public:
  Version() = default;
  explicit Version(std::vector<std::uint64_t> components);

  // As the reference's `Version::from_str`: surrounding Unicode white space is trimmed, each
  // dot-separated part is a u64 with an optional leading '+' ("+1", "007" are fine).
  // Errors: "empty version string", "version must consist of numbers: \"x\"".
  static util::Expected<Version> parse(std::string_view text);

  const std::vector<std::uint64_t>& components() const { return m_components; }
  std::uint64_t major() const { return component(0); }
  std::uint64_t minor() const { return component(1); }
  std::uint64_t component(std::size_t index) const;

  // Normalised form: "2.12" for "2.12.0". A version of only zeros prints as "0" where the
  // reference prints "" (which its own parser then rejects): deliberate, so writing a
  // version and reading it back always works.
  std::string to_string() const;
  // Major and minor concatenated, as variant names spell them: 2.12 -> "212", 0.1 -> "01".
  std::string flattened() const;

  friend std::strong_ordering operator<=>(const Version&, const Version&) = default;
  friend bool operator==(const Version&, const Version&) = default;

 private:
  std::vector<std::uint64_t> m_components;
};

}  // namespace kernelhub::types
