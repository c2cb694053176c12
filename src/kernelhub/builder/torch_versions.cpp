// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/torch_versions.hpp>

#include <algorithm>
#include <variant>

#include <fmt/format.h>

namespace kernelhub::builder {

namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

}  // namespace

types::Version torch_release(const variants::ReleaseVersion& torch) {
  // Digit strings of a parsed release are short for any real torch; an absurd one saturates.
  const auto number = [](const std::string& digits) -> std::uint64_t {
    return digits.size() > 18 ? UINT64_MAX : std::stoull(digits);
  };
  return types::Version({number(torch.major()), number(torch.minor())});
}

std::optional<std::string> torch_bounds_refusal(const config::Torch& torch_section,
                                                const variants::ReleaseVersion& torch) {
  const auto release = torch_release(torch);
  if (torch_section.minver && release < *torch_section.minver) {
    return fmt::format("torch {} is older than the kernel's torch.minver \"{}\"; build with a "
                       "torch from {} on (--torch {})",
                       torch.to_string(), torch_section.minver->to_string(),
                       torch_section.minver->to_string(), torch_section.minver->to_string());
  }
  if (torch_section.maxver && release > *torch_section.maxver) {
    return fmt::format("torch {} is newer than the kernel's torch.maxver \"{}\"; build with a "
                       "torch up to {} (--torch {})",
                       torch.to_string(), torch_section.maxver->to_string(),
                       torch_section.maxver->to_string(), torch_section.maxver->to_string());
  }
  return std::nullopt;
}

util::Expected<std::vector<variants::ReleaseVersion>> parse_torch_list(std::string_view text) {
  std::vector<variants::ReleaseVersion> versions;
  while (true) {
    const auto comma = text.find(',');
    const auto entry = trim(text.substr(0, comma));
    const auto dot = entry.find('.');
    const bool well_formed = dot != std::string_view::npos &&
                             entry.find('.', dot + 1) == std::string_view::npos &&
                             variants::is_digits(entry.substr(0, dot)) &&
                             variants::is_digits(entry.substr(dot + 1));
    if (!well_formed) {
      return util::fail(fmt::format(
          "invalid torch version \"{}\" in --torch; expected major.minor releases separated "
          "by commas, such as \"2.14,2.15\"",
          entry));
    }
    auto version = variants::ReleaseVersion::from_parts(entry.substr(0, dot), entry.substr(dot + 1));
    if (std::find(versions.begin(), versions.end(), version) == versions.end()) {
      versions.push_back(std::move(version));
    }
    if (comma == std::string_view::npos) {
      break;
    }
    text.remove_prefix(comma + 1);
  }
  return versions;
}

bool needs_torch(const config::BuildConfig& config) {
  return std::holds_alternative<config::Torch>(config.framework) &&
         !config.backends_with_kernels().empty();
}

MatrixPlan plan_torch_matrix(const config::BuildConfig& config,
                             const std::vector<TorchTarget>& targets) {
  MatrixPlan merged;
  std::vector<BuildPlan> plans;
  for (const auto& target : targets) {
    plans.push_back(plan_build(config, target.host));
  }
  const auto torch_of = [&](std::size_t index) {
    const auto& torch = targets[index].host.torch;
    return torch ? torch->torch_version : variants::ReleaseVersion{};
  };
  for (std::size_t index = 0; index < plans.size(); ++index) {
    for (const auto& planned : plans[index].variants) {
      auto same = std::find_if(merged.variants.begin(), merged.variants.end(),
                               [&](const auto& seen) { return seen.variant.name == planned.name; });
      if (same == merged.variants.end()) {
        merged.variants.push_back({planned, index});
      } else if (planned.stable_abi && torch_of(index) > torch_of(same->target)) {
        same->target = index;
      }
    }
  }
  for (std::size_t index = 0; index < plans.size(); ++index) {
    for (const auto& skip : plans[index].skipped) {
      const bool shared = std::all_of(plans.begin(), plans.end(), [&](const BuildPlan& plan) {
        return std::any_of(plan.skipped.begin(), plan.skipped.end(), [&](const auto& other) {
          return other.backend == skip.backend && other.reason == skip.reason;
        });
      });
      SkippedBackend entry = skip;
      if (!shared) {
        entry.reason = fmt::format("with torch {}: {}", torch_of(index).to_string(), skip.reason);
      }
      const bool seen = std::any_of(merged.skipped.begin(), merged.skipped.end(), [&](const auto& other) {
        return other.backend == entry.backend && other.reason == entry.reason;
      });
      if (!seen) {
        merged.skipped.push_back(std::move(entry));
      }
    }
  }
  return merged;
}

}  // namespace kernelhub::builder
