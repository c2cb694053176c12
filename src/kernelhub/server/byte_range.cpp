// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/byte_range.hpp>

#include <charconv>

namespace kernelhub::server {

namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return text;
}

// A non-empty run of digits that fits in 64 bits, and nothing else.
std::optional<std::uint64_t> parse_number(std::string_view text) {
  if (text.empty()) {
    return std::nullopt;
  }
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

RangeDecision decide_range(std::optional<std::string_view> header, std::uint64_t size) {
  const RangeDecision full{RangeOutcome::full, 0, size};
  if (!header) {
    return full;
  }
  std::string_view spec = trim(*header);
  constexpr std::string_view k_unit = "bytes=";
  if (!spec.starts_with(k_unit)) {
    return full;
  }
  spec = trim(spec.substr(k_unit.size()));
  if (spec.find(',') != std::string_view::npos) {
    return full;
  }
  const std::size_t dash = spec.find('-');
  if (dash == std::string_view::npos) {
    return full;
  }
  const std::string_view first_text = trim(spec.substr(0, dash));
  const std::string_view last_text = trim(spec.substr(dash + 1));
  if (first_text.empty()) {
    // A suffix range: the last N bytes.
    const auto suffix = parse_number(last_text);
    if (!suffix) {
      return full;
    }
    if (*suffix == 0 || size == 0) {
      return {RangeOutcome::unsatisfiable, 0, 0};
    }
    const std::uint64_t length = *suffix < size ? *suffix : size;
    return {RangeOutcome::partial, size - length, length};
  }
  const auto first = parse_number(first_text);
  if (!first) {
    return full;
  }
  std::uint64_t last = size == 0 ? 0 : size - 1;
  if (!last_text.empty()) {
    const auto parsed_last = parse_number(last_text);
    if (!parsed_last || *parsed_last < *first) {
      return full;
    }
    last = *parsed_last < last ? *parsed_last : last;
  }
  if (*first >= size) {
    return {RangeOutcome::unsatisfiable, 0, 0};
  }
  return {RangeOutcome::partial, *first, last - *first + 1};
}

}  // namespace kernelhub::server
