// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <nlohmann/json.hpp>

#include <kernelhub/variants/acceptance.hpp>

// The variant decision trace as JSON, shared by `kernelhub download` and `kernelhub versions`:
// one object per decision, best first, with the reference's rejection reason.
namespace kernelhub::cli::commands {

inline nlohmann::ordered_json trace_json(const variants::Resolution& resolution) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  const auto* best = resolution.best();
  for (const auto& decision : resolution.trace) {
    out.push_back({{"variant", variants::to_string(decision.variant)},
                   {"accepted", decision.accepted()},
                   {"preferred", best != nullptr && decision.variant == *best},
                   {"reason", decision.rejection ? nlohmann::ordered_json(*decision.rejection)
                                                 : nlohmann::ordered_json()}});
  }
  return out;
}

}  // namespace kernelhub::cli::commands
