// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/metadata/kernel_id.hpp>

#include <algorithm>
#include <random>

#include <fmt/format.h>

namespace kernelhub::metadata {

namespace {

constexpr std::size_t k_tree_prefix = 7;
constexpr std::string_view k_dev_id_prefix = "dev";
constexpr std::size_t k_dev_id_bytes = 6;  // 48 bits: 10 base32 characters

}  // namespace

std::string base32_lower(std::string_view bytes) {
  static constexpr std::string_view k_alphabet = "abcdefghijklmnopqrstuvwxyz234567";
  std::string out;
  std::uint32_t buffer = 0;
  int bits = 0;
  for (const char c : bytes) {
    buffer = (buffer << 8) | static_cast<unsigned char>(c);
    bits += 8;
    while (bits >= 5) {
      out += k_alphabet[(buffer >> (bits - 5)) & 0x1F];
      bits -= 5;
    }
  }
  if (bits > 0) {
    out += k_alphabet[(buffer << (5 - bits)) & 0x1F];
  }
  return out;
}

std::string unique_id(const UniqueIdSource& source, std::uint64_t random_value) {
  if (source.given) {
    return *source.given;
  }
  if (source.git_tree_id) {
    auto rev = source.git_tree_id->substr(0, k_tree_prefix);
    return source.git_dirty ? rev + "_dirty" : rev;
  }
  std::string bytes(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) {
    bytes[i] = static_cast<char>((random_value >> (8 * i)) & 0xFF);
  }
  return base32_lower(bytes);
}

std::uint64_t random_id_value() {
  std::random_device device;
  return (std::uint64_t{device()} << 32) | device();
}

std::string unique_id(const UniqueIdSource& source) {
  return unique_id(source, random_id_value());
}

std::string dev_unique_id(std::uint64_t random_value) {
  std::string bytes(k_dev_id_bytes, '\0');
  for (std::size_t i = 0; i < k_dev_id_bytes; ++i) {
    bytes[i] = static_cast<char>((random_value >> (8 * i)) & 0xFF);
  }
  return std::string(k_dev_id_prefix) + base32_lower(bytes);
}

bool is_dev_unique_id(std::string_view unique) {
  constexpr std::size_t k_chars = (k_dev_id_bytes * 8 + 4) / 5;
  if (unique.size() != k_dev_id_prefix.size() + k_chars || !unique.starts_with(k_dev_id_prefix)) {
    return false;
  }
  return std::all_of(unique.begin() + static_cast<std::ptrdiff_t>(k_dev_id_prefix.size()),
                     unique.end(), [](char c) {
                       return (c >= 'a' && c <= 'z') || (c >= '2' && c <= '7');
                     });
}

std::string kernel_id(const types::KernelName& name, types::Backend backend,
                      std::string_view unique) {
  return fmt::format("_{}_{}_{}", name.python_name(), types::to_string(backend), unique);
}

bool is_python_identifier(std::string_view text) {
  const auto word_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  return !text.empty() && !(text.front() >= '0' && text.front() <= '9') &&
         std::all_of(text.begin(), text.end(), word_char);
}

util::Expected<std::string> checked_kernel_id(const types::KernelName& name,
                                              types::Backend backend, std::string_view unique) {
  auto id = kernel_id(name, backend, unique);
  if (!is_python_identifier(id)) {
    return util::fail(fmt::format("kernel id \"{}\" is not a valid Python identifier", id));
  }
  return id;
}

}  // namespace kernelhub::metadata
