// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/loaded_kernels.hpp>

#include <algorithm>

namespace kernelhub::loader {

namespace fs = std::filesystem;


std::optional<LoadedKernel> LoadedKernelRegistry::find(const fs::path& variant_path) const {
  const fs::path key = normal_path(variant_path);
  std::lock_guard lock(m_mutex);
  const auto it = std::find_if(m_kernels.begin(), m_kernels.end(),
                               [&](const auto& k) { return k.module.variant_path == key; });
  if (it == m_kernels.end()) {
    return std::nullopt;
  }
  return *it;
}

LoadedKernel LoadedKernelRegistry::add(LoadedKernel kernel) {
  kernel.module.variant_path = normal_path(kernel.module.variant_path);
  std::lock_guard lock(m_mutex);
  const auto it = std::find_if(m_kernels.begin(), m_kernels.end(), [&](const auto& k) {
    return k.module.variant_path == kernel.module.variant_path;
  });
  if (it != m_kernels.end()) {
    return *it;
  }
  m_kernels.push_back(kernel);
  return kernel;
}

std::vector<LoadedKernel> LoadedKernelRegistry::list() const {
  std::lock_guard lock(m_mutex);
  return m_kernels;
}

bool LoadedKernelRegistry::remove(const fs::path& variant_path) {
  const fs::path key = normal_path(variant_path);
  std::lock_guard lock(m_mutex);
  const auto removed = std::erase_if(m_kernels,
                                     [&](const auto& k) { return k.module.variant_path == key; });
  return removed > 0;
}

}  // namespace kernelhub::loader
