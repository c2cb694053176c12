// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>

namespace kernelhub::server {

// `2026-11-25T20:05:27.000Z` (UTC): the one date form the Hub's API answers and
// huggingface_hub parses, for commit dates, lastModified and discussion events.
std::string hub_timestamp(std::int64_t seconds_since_epoch);

}  // namespace kernelhub::server
