// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include <kernelhub/variants/build_variants.hpp>

// `kernel-builder check-builds`: how a build/ folder covers the variants a kernel's build.toml
// yields over the compliance matrix, so an author sees before uploading which ones are still
// to be built elsewhere (a CUDA machine, macOS) and which folders no build of this kernel
// makes (a stale torch version, a renamed backend).
namespace kernelhub::variants {

struct BuildCoverage {
  std::vector<std::string> expected;    // every variant the matrix yields, first-seen order
  std::vector<std::string> present;     // expected variants found, in expected order
  std::vector<std::string> missing;     // expected variants not found, in expected order
  std::vector<std::string> unexpected;  // found variants no system yields, sorted
};

// The unique variant names (not arch names) of every system in `systems`, in system order, as
// `list-variants --all` prints them.
std::vector<std::string> expected_variant_names(const std::vector<SystemVariants>& systems);

// Compares `expected` with the variant folder names `found` (any order; duplicates ignored).
BuildCoverage compare_builds(const std::vector<std::string>& expected,
                             const std::vector<std::string>& found);

}  // namespace kernelhub::variants
