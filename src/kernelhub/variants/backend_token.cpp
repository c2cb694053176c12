// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/variants/backend_token.hpp>

#include <array>

#include <fmt/format.h>

namespace kernelhub::variants {

namespace {

struct TokenPrefix {
  std::string_view prefix;
  types::Backend kind;
};

// Checked in the reference's order: "cuda" starts with "cu", so it is a malformed CUDA
// token rather than an unknown backend (both are rejected).
constexpr std::array<TokenPrefix, 4> k_versioned_prefixes = {{
    {"cu", types::Backend::cuda},
    {"rocm", types::Backend::rocm},
    {"xpu", types::Backend::xpu},
    {"cann", types::Backend::cann},
}};

constexpr std::array<types::Backend, 4> k_plain_backends = {
    types::Backend::cpu, types::Backend::metal, types::Backend::neuron, types::Backend::tpu};

std::string_view prefix_of(types::Backend kind) {
  for (const auto& entry : k_versioned_prefixes) {
    if (entry.kind == kind) {
      return entry.prefix;
    }
  }
  return types::to_string(kind);
}

}  // namespace

bool is_versioned(types::Backend kind) {
  return kind == types::Backend::cuda || kind == types::Backend::rocm ||
         kind == types::Backend::xpu || kind == types::Backend::cann;
}

util::Expected<BackendToken> parse_backend_token(std::string_view text) {
  for (const auto kind : k_plain_backends) {
    if (text == types::to_string(kind)) {
      return BackendToken{kind, {}};
    }
  }
  for (const auto& entry : k_versioned_prefixes) {
    if (!text.starts_with(entry.prefix)) {
      continue;
    }
    // `<prefix>(\d+)(\d+)`: at least two digits, the last one is the minor version.
    const auto digits = text.substr(entry.prefix.size());
    if (digits.size() < 2 || !is_digits(digits)) {
      return util::fail(fmt::format("invalid {} version in \"{}\"", types::to_string(entry.kind), text));
    }
    return BackendToken{entry.kind, ReleaseVersion::from_parts(digits.substr(0, digits.size() - 1),
                                                               digits.substr(digits.size() - 1))};
  }
  return util::fail(fmt::format("unknown backend \"{}\"", text));
}

std::string to_string(const BackendToken& token) {
  if (!is_versioned(token.kind)) {
    return std::string(types::to_string(token.kind));
  }
  return fmt::format("{}{}", prefix_of(token.kind), token.version.flattened());
}

}  // namespace kernelhub::variants
