// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/lfs_pointer.hpp>

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace kernelhub::server {

namespace {

constexpr std::string_view k_version_line = "version https://git-lfs.github.com/spec/v1\n";
constexpr std::string_view k_oid_prefix = "oid sha256:";
constexpr std::string_view k_size_prefix = "size ";

}  // namespace

std::string lfs_pointer_text(const LfsPointer& pointer) {
  return fmt::format("{}{}{}\n{}{}\n", k_version_line, k_oid_prefix, pointer.oid, k_size_prefix,
                     pointer.size);
}

bool is_sha256_hex(std::string_view text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::optional<LfsPointer> parse_lfs_pointer(std::string_view text) {
  if (text.size() > k_max_lfs_pointer_bytes || !text.starts_with(k_version_line)) {
    return std::nullopt;
  }
  text.remove_prefix(k_version_line.size());
  if (!text.starts_with(k_oid_prefix)) {
    return std::nullopt;
  }
  text.remove_prefix(k_oid_prefix.size());
  const std::size_t oid_end = text.find('\n');
  if (oid_end == std::string_view::npos || !is_sha256_hex(text.substr(0, oid_end))) {
    return std::nullopt;
  }
  LfsPointer pointer{std::string(text.substr(0, oid_end)), 0};
  text.remove_prefix(oid_end + 1);
  if (!text.starts_with(k_size_prefix) || !text.ends_with('\n')) {
    return std::nullopt;
  }
  const std::string_view digits = text.substr(k_size_prefix.size(),
                                              text.size() - k_size_prefix.size() - 1);
  // Digits only, no sign or leading zero (the canonical form has none).
  if (digits.empty() || (digits.size() > 1 && digits.front() == '0')) {
    return std::nullopt;
  }
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(),
                                            pointer.size);
  if (error != std::errc() || end != digits.data() + digits.size()) {
    return std::nullopt;
  }
  return pointer;
}

}  // namespace kernelhub::server
