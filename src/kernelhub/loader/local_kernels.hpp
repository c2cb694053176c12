// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/util/expected.hpp>

// LOCAL_KERNELS (loader.md §1.3): "org/a=/path/a:org/b=/path/b" maps repository ids to local
// kernel paths that get_kernel loads instead of the Hub.
namespace kernelhub::loader {

struct LocalKernelOverride {
  std::string repo_id;
  std::filesystem::path path;
  friend bool operator==(const LocalKernelOverride&, const LocalKernelOverride&) = default;
};

// Splits on ':' and each entry on its first '='. A repeated repo id keeps its first position
// and takes the last path, as the reference's dict does. An entry without '=' (an empty
// string included) is an error with the reference's exact text, so Python callers can raise
// the same ValueError.
util::Expected<std::vector<LocalKernelOverride>> parse_local_kernels(std::string_view text);

// The override for `repo_id` in `text`, nullopt when none (or when text has none).
util::Expected<std::optional<std::filesystem::path>> find_local_kernel(std::string_view text,
                                                                       std::string_view repo_id);

}  // namespace kernelhub::loader
