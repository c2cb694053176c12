// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>

#include <kernelhub/loader/device_arch.hpp>
#include <kernelhub/util/expected.hpp>
#include <kernelhub/variants/acceptance.hpp>
#include <kernelhub/variants/system.hpp>

// The reference's get_local_kernel lookup (loader.md §1.1, kernels' resolve_local_kernel):
// variant folders in `path`, then in `path/build`; if neither has one that fits and `path`
// looks like a variant itself, `path` is the variant.
namespace kernelhub::loader {

struct LocalVariantMatch {
  std::filesystem::path variant_path;
  // The decisions of the folder the variant came from (empty when `path` is the variant),
  // with arch-excluded variants turned into rejections.
  variants::Resolution resolution;
};

// Variant folder names directly in `dir` (names that do not parse are kept out later by the
// resolution, silently, as the reference does for local folders).
std::vector<std::string> list_variant_dirs(const std::filesystem::path& dir);

// Resolves `names` in `dir` for `system`, then rejects accepted variants whose metadata archs
// exclude `device` (reason in the trace) and re-sorts.
variants::Resolution resolve_local_dir(const std::filesystem::path& dir,
                                       const variants::SystemInfo& system,
                                       const DeviceArch& device);

// Error: "Cannot find a build variant for this system in <path>:\n\n<trace>" (the reference's
// text, so Python can raise the same FileNotFoundError).
util::Expected<LocalVariantMatch> find_local_variant(const std::filesystem::path& path,
                                                     const variants::SystemInfo& system,
                                                     const DeviceArch& device);

}  // namespace kernelhub::loader
