// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/builder/build_plan.hpp>
#include <kernelhub/config/build_config.hpp>
#include <kernelhub/types/version.hpp>
#include <kernelhub/util/expected.hpp>
#include <kernelhub/variants/release_version.hpp>

// Which torch releases a kernel is built against: the `--torch 2.14,2.15` list and the
// kernel's own `torch.minver` / `torch.maxver` bounds (builder.md §2.3, §4).
namespace kernelhub::builder {

// major.minor of a torch release as a types::Version, the type build.toml's bounds use.
types::Version torch_release(const variants::ReleaseVersion& torch);

// Why `torch` is outside the kernel's inclusive [torch.minver, torch.maxver] bounds, naming
// both versions, or nothing when it is inside. As the reference's Nix build-set filter, only
// major.minor count (2.12.1 is 2.12).
std::optional<std::string> torch_bounds_refusal(const config::Torch& torch_section,
                                                const variants::ReleaseVersion& torch);

// The `--torch` option: comma-separated major.minor releases ("2.14,2.15"), white space
// around each ignored, duplicates dropped, order kept. Errors quote the offending entry.
util::Expected<std::vector<variants::ReleaseVersion>> parse_torch_list(std::string_view text);

// True when building the kernel compiles against torch at all: a [torch] kernel with a
// [kernel.*] for one of its backends (the others are noarch).
bool needs_torch(const config::BuildConfig& config);

// One torch the kernel is built against: the Python that has it, and what was found there.
struct TorchTarget {
  std::filesystem::path python;
  HostTools host;
  // modules_fingerprint(python, {"torch", "kernels"}) when a probe cache is used: the probe's
  // cache key, and the load check's, from one interpreter start.
  std::optional<std::string> fingerprint = {};
};

struct TargetedVariant {
  PlannedVariant variant;
  std::size_t target = 0;  // index into the targets planned over
};

struct MatrixPlan {
  std::vector<TargetedVariant> variants;
  std::vector<SkippedBackend> skipped;
};

// plan_build over every target, merged: each variant once (noarch variants from the first
// target; a stable-ABI variant from the newest torch, as the reference's Nix keeps only the
// newest torch of a stable-ABI backend), arch variants once per torch. A skip every target
// shares is reported once; one that only some targets have says which torch it is for.
MatrixPlan plan_torch_matrix(const config::BuildConfig& config,
                             const std::vector<TorchTarget>& targets);

}  // namespace kernelhub::builder
