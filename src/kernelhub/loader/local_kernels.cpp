// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/local_kernels.hpp>

#include <algorithm>

#include <fmt/format.h>

namespace kernelhub::loader {

util::Expected<std::vector<LocalKernelOverride>> parse_local_kernels(std::string_view text) {
  std::vector<LocalKernelOverride> overrides;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(':', start);
    const std::string_view entry =
        text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    const std::size_t equals = entry.find('=');
    if (equals == std::string_view::npos) {
      // The reference's message verbatim (Python raises it as ValueError).
      return util::fail(fmt::format(
          "Invalid LOCAL_KERNELS entry: {}. Expected format: repo_id_1=path_1:repo_id_2=path_2",
          entry));
    }
    LocalKernelOverride item{std::string(entry.substr(0, equals)),
                             std::filesystem::path(std::string(entry.substr(equals + 1)))};
    auto existing = std::find_if(overrides.begin(), overrides.end(),
                                 [&](const auto& o) { return o.repo_id == item.repo_id; });
    if (existing != overrides.end()) {
      existing->path = std::move(item.path);
    } else {
      overrides.push_back(std::move(item));
    }
    if (end == std::string_view::npos) {
      break;
    }
    start = end + 1;
  }
  return overrides;
}

util::Expected<std::optional<std::filesystem::path>> find_local_kernel(std::string_view text,
                                                                       std::string_view repo_id) {
  const auto overrides = KH_TRY(parse_local_kernels(text));
  for (const auto& entry : overrides) {
    if (entry.repo_id == repo_id) {
      return std::optional<std::filesystem::path>(entry.path);
    }
  }
  return std::optional<std::filesystem::path>();
}

}  // namespace kernelhub::loader
