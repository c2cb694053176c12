// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kernelhub::server {

// What a GET with an optional `Range` header gets (RFC 9110 §14): the whole body, one part
// (206), or 416 when the range starts past the end. Syntax we do not serve (several ranges,
// other units, garbage) is ignored, which the RFC allows: the client then gets a 200.
enum class RangeOutcome { full, partial, unsatisfiable };

struct RangeDecision {
  RangeOutcome outcome = RangeOutcome::full;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;  // the bytes to send; the whole size for `full`
};

RangeDecision decide_range(std::optional<std::string_view> header, std::uint64_t size);

}  // namespace kernelhub::server
