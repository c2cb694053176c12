// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/metadata/built_variants.hpp>

#include <algorithm>

namespace kernelhub::metadata {

namespace fs = std::filesystem;

std::vector<std::string> built_variant_names(const fs::path& kernel_dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (fs::directory_iterator it(kernel_dir / "build", error), end; !error && it != end;
       it.increment(error)) {
    const auto name = it->path().filename().string();
    if (!name.starts_with(".") && fs::is_regular_file(it->path() / "metadata.json", error)) {
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace kernelhub::metadata
