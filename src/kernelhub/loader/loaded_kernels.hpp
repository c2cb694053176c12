// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <kernelhub/loader/kernel_module.hpp>

// The process's registry of loaded kernels (the reference's `_loaded_kernels`): one record per
// variant path, in load order, so a second load of the same path returns the first one and
// several builds of one kernel (different paths, different ids) live side by side.
namespace kernelhub::loader {

struct RepoInfo {
  std::string repo_id;
  std::string revision;
  friend bool operator==(const RepoInfo&, const RepoInfo&) = default;
};

struct LoadedKernel {
  KernelModule module;
  std::optional<RepoInfo> repo_info;  // nullopt for local and locked loads
};

class LoadedKernelRegistry {
 public:
  // The record for `variant_path` (compared after normalisation), if loaded.
  std::optional<LoadedKernel> find(const std::filesystem::path& variant_path) const;
  // Records a load; a path loaded before keeps its first record, which is returned.
  LoadedKernel add(LoadedKernel kernel);
  std::vector<LoadedKernel> list() const;
  // Forgets the record of `variant_path` (a later load of that path imports it again);
  // false when it was not loaded.
  bool remove(const std::filesystem::path& variant_path);

 private:
  mutable std::mutex m_mutex;
  std::vector<LoadedKernel> m_kernels;
};

}  // namespace kernelhub::loader
