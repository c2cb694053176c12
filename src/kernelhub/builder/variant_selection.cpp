// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/variant_selection.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <kernelhub/util/did_you_mean.hpp>

namespace kernelhub::builder {

namespace {

std::string lowercase(std::string_view text) {
  std::string result(text);
  std::transform(result.begin(), result.end(), result.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return result;
}

std::vector<std::string> parts_of(std::string_view name) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= name.size()) {
    const auto dash = std::min(name.find('-', start), name.size());
    if (dash > start) {
      parts.push_back(lowercase(name.substr(start, dash - start)));
    }
    start = dash + 1;
  }
  return parts;
}

// Backends whose variant part carries a version: "cuda" means cu128, "rocm" rocm71...
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> k_versioned_parts = {{
    {"cuda", "cu"}, {"rocm", "rocm"}, {"xpu", "xpu"}, {"cann", "cann"}}};

bool part_matches(std::string_view wanted, std::string_view part) {
  if (wanted == part) {
    return true;
  }
  for (const auto& [backend, prefix] : k_versioned_parts) {
    if (wanted == backend && part.size() > prefix.size() && part.starts_with(prefix) &&
        std::all_of(part.begin() + static_cast<std::ptrdiff_t>(prefix.size()), part.end(),
                    [](unsigned char c) { return std::isdigit(c) != 0; })) {
      return true;
    }
  }
  return false;
}

std::string unknown_variant_message(const std::string& name, const MatrixPlan& plan) {
  std::vector<std::string> buildable;
  for (const auto& targeted : plan.variants) {
    buildable.push_back(targeted.variant.name);
  }
  auto message = fmt::format("variant \"{}\" is not one this machine builds", name);
  if (const auto closest = closest_variant_name(name, buildable); !closest.empty()) {
    message += fmt::format("; did you mean \"{}\"?", closest);
  }
  message += fmt::format(" (buildable here: {})", fmt::join(buildable, ", "));
  for (const auto& skip : plan.skipped) {
    message += fmt::format("; {} is not built here: {}", types::to_string(skip.backend),
                           skip.reason);
  }
  return message;
}

}  // namespace

std::vector<std::string> match_variant_name(std::string_view requested,
                                            std::span<const std::string> available) {
  if (std::find(available.begin(), available.end(), requested) != available.end()) {
    return {std::string(requested)};
  }
  const auto wanted = parts_of(requested);
  std::vector<std::string> matches;
  if (wanted.empty()) {
    return matches;
  }
  for (const auto& name : available) {
    const auto parts = parts_of(name);
    const bool all_found = std::all_of(wanted.begin(), wanted.end(), [&](const std::string& w) {
      return std::any_of(parts.begin(), parts.end(),
                         [&](const std::string& part) { return part_matches(w, part); });
    });
    if (all_found) {
      matches.push_back(name);
    }
  }
  return matches;
}

std::string closest_variant_name(std::string_view requested,
                                 std::span<const std::string> available) {
  std::string best;
  std::size_t best_distance = 0;
  for (const auto& name : available) {
    const auto distance = util::edit_distance(requested, name);
    if (best.empty() || distance < best_distance) {
      best = name;
      best_distance = distance;
    }
  }
  return best;
}

util::Expected<MatrixPlan> select_variants(MatrixPlan plan, const std::vector<std::string>& names,
                                           UnbuildableVariants unbuildable) {
  if (names.empty()) {
    return plan;
  }
  std::vector<std::string> buildable;
  for (const auto& targeted : plan.variants) {
    buildable.push_back(targeted.variant.name);
  }
  // Every name is checked before anything is dropped, so the message lists the whole
  // buildable set; the first unknown one is reported (one typo at a time reads best).
  std::vector<std::string> wanted;
  for (const auto& name : names) {
    const auto matches = match_variant_name(name, buildable);
    if (matches.empty() && unbuildable == UnbuildableVariants::fail) {
      return util::fail(unknown_variant_message(name, plan));
    }
    wanted.insert(wanted.end(), matches.begin(), matches.end());
  }
  if (wanted.empty()) {
    return util::fail(unknown_variant_message(names.front(), plan));
  }
  std::erase_if(plan.variants, [&](const TargetedVariant& targeted) {
    return std::find(wanted.begin(), wanted.end(), targeted.variant.name) == wanted.end();
  });
  return plan;
}

}  // namespace kernelhub::builder
