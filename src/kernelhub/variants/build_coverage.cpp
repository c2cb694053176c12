// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/variants/build_coverage.hpp>

#include <algorithm>
#include <set>

namespace kernelhub::variants {

std::vector<std::string> expected_variant_names(const std::vector<SystemVariants>& systems) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  // Noarch names ("torch-cpu") recur on every system; they are one folder in build/.
  for (const auto& system : systems) {
    for (const auto& variant : system.variants) {
      if (seen.insert(variant.name).second) {
        names.push_back(variant.name);
      }
    }
  }
  return names;
}

BuildCoverage compare_builds(const std::vector<std::string>& expected,
                             const std::vector<std::string>& found) {
  BuildCoverage coverage;
  coverage.expected = expected;
  const std::set<std::string> found_set(found.begin(), found.end());
  for (const auto& name : expected) {
    (found_set.contains(name) ? coverage.present : coverage.missing).push_back(name);
  }
  const std::set<std::string> expected_set(expected.begin(), expected.end());
  for (const auto& name : found_set) {
    if (!expected_set.contains(name)) {
      coverage.unexpected.push_back(name);
    }
  }
  return coverage;
}

}  // namespace kernelhub::variants
