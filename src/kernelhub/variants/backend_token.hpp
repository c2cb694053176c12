// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

#include <kernelhub/types/backend.hpp>
#include <kernelhub/util/expected.hpp>
#include <kernelhub/variants/release_version.hpp>

namespace kernelhub::variants {

// The compute part of an arch variant name (the loader's `parse_backend`): "cpu", "metal",
// "neuron", "tpu", or a versioned token "cu126" (CUDA 12.6), "rocm71", "xpu20253" (2025.3),
// "cann81". Versioned tokens take the LAST digit as the minor version, as the reference's
// greedy regexes do, so "cu1210" is CUDA 121.0, not 12.10.
struct BackendToken {
  types::Backend kind = types::Backend::cpu;
  ReleaseVersion version;  // major.minor for cuda, rocm, xpu and cann; empty otherwise

  friend bool operator==(const BackendToken&, const BackendToken&) = default;
};

// Backends whose token carries a version.
bool is_versioned(types::Backend kind);

// Errors: "unknown backend \"x\"" or "invalid cuda version in \"cux\"".
util::Expected<BackendToken> parse_backend_token(std::string_view text);

// The token as variant names spell it ("cu128"); the inverse of parse_backend_token for names
// without leading zeros.
std::string to_string(const BackendToken& token);

}  // namespace kernelhub::variants
