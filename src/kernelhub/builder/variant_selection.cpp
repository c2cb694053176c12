// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/variant_selection.hpp>

#include <algorithm>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <kernelhub/util/did_you_mean.hpp>

namespace kernelhub::builder {

namespace {

std::string unknown_variant_message(const std::string& name, const MatrixPlan& plan) {
  std::vector<std::string_view> buildable;
  for (const auto& targeted : plan.variants) {
    buildable.push_back(targeted.variant.name);
  }
  auto message = fmt::format("variant \"{}\" is not one this machine builds", name);
  if (const auto suggestion = util::did_you_mean(name, buildable); !suggestion.empty()) {
    message += "; " + suggestion;
  }
  message += fmt::format(" (buildable here: {})", fmt::join(buildable, ", "));
  for (const auto& skip : plan.skipped) {
    message += fmt::format("; {} is not built here: {}", types::to_string(skip.backend),
                           skip.reason);
  }
  return message;
}

}  // namespace

util::Expected<MatrixPlan> select_variants(MatrixPlan plan,
                                           const std::vector<std::string>& names) {
  if (names.empty()) {
    return plan;
  }
  // Every unknown name is checked before anything is dropped, so the message lists the whole
  // buildable set; the first unknown one is reported (one typo at a time reads best).
  for (const auto& name : names) {
    const auto found = std::any_of(plan.variants.begin(), plan.variants.end(),
                                   [&](const auto& targeted) { return targeted.variant.name == name; });
    if (!found) {
      return util::fail(unknown_variant_message(name, plan));
    }
  }
  std::erase_if(plan.variants, [&](const TargetedVariant& targeted) {
    return std::find(names.begin(), names.end(), targeted.variant.name) == names.end();
  });
  return plan;
}

}  // namespace kernelhub::builder
