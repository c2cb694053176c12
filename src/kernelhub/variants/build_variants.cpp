// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/variants/build_variants.hpp>

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace kernelhub::variants {

namespace {

bool is_tvm_ffi(const config::BuildConfig& config) {
  return std::holds_alternative<config::TvmFfi>(config.framework);
}

bool has_kernel_for(const config::BuildConfig& config, types::Backend backend) {
  return std::any_of(config.kernels.begin(), config.kernels.end(),
                     [&](const config::Kernel& kernel) { return kernel.backend == backend; });
}

bool within(const types::Version& version, const types::Version& min, const types::Version& max) {
  return min <= version && version <= max;
}

// What the reference's Nix names call the compute part: "cu126", "rocm71", "xpu20253".
std::string compute_string(const MatrixConfig& config, bool tvm_ffi) {
  switch (config.backend) {
    case types::Backend::cuda:
      return "cu" + config.backend_version->version.flattened();
    case types::Backend::rocm:
      return "rocm" + config.backend_version->version.flattened();
    case types::Backend::xpu:
      return "xpu" + config.backend_version->version.flattened();
    case types::Backend::metal:
      return "metal";
    case types::Backend::tpu:
      // tvm-ffi's naming has no TPU case and falls through to "cpu".
      return tvm_ffi ? "cpu" : "tpu";
    default:
      return "cpu";
  }
}

bool supported(const config::BuildConfig& config, const ComplianceMatrix& matrix,
               const MatrixConfig& entry) {
  const auto& backends = config.general.backends;
  if (std::find(backends.begin(), backends.end(), entry.backend) == backends.end()) {
    return false;
  }
  if (is_tvm_ffi(config) && !entry.tvm_ffi) {
    return false;
  }
  if (entry.backend == types::Backend::cuda) {
    const auto& cuda = config.general.cuda;
    const auto min = cuda && cuda->minver ? *cuda->minver : matrix.cuda_minver;
    const auto max = cuda && cuda->maxver ? *cuda->maxver : matrix.cuda_maxver;
    if (!within(entry.backend_version->version, min, max)) {
      return false;
    }
  }
  // Only [torch] has bounds; noarch and tvm-ffi kernels get the defaults.
  const auto* torch = std::get_if<config::Torch>(&config.framework);
  const auto min = torch && torch->minver ? *torch->minver : matrix.torch_minver;
  const auto max = torch && torch->maxver ? *torch->maxver : matrix.torch_maxver;
  return within(entry.torch.version, min, max);
}

}  // namespace

std::optional<types::Version> stable_abi_for(const config::BuildConfig& config, types::Backend backend) {
  const auto* torch = std::get_if<config::Torch>(&config.framework);
  if (torch == nullptr || !torch->stable_abi) {
    return std::nullopt;
  }
  if (const auto* all = std::get_if<types::Version>(&*torch->stable_abi)) {
    return *all;
  }
  const auto& per_backend = std::get<std::map<types::Backend, types::Version>>(*torch->stable_abi);
  const auto found = per_backend.find(backend);
  return found == per_backend.end() ? std::nullopt : std::optional(found->second);
}

std::vector<BuildSet> applicable_build_sets(const config::BuildConfig& config,
                                            const ComplianceMatrix& matrix, const std::string& system) {
  // Stable-ABI build sets grouped by "<backend>-<backend version text>"; a std::map iterates
  // in the same byte order as Nix's attribute names.
  std::map<std::string, BuildSet> newest_stable;
  std::vector<BuildSet> others;
  for (const auto& entry : matrix.configs) {
    if (std::find(entry.systems.begin(), entry.systems.end(), system) == entry.systems.end() ||
        !supported(config, matrix, entry)) {
      continue;
    }
    const BuildSet set{&entry, system};
    if (!stable_abi_for(config, entry.backend)) {
      others.push_back(set);
      continue;
    }
    // One stable-ABI build serves every newer Torch, so only the newest Torch is built.
    const auto key = fmt::format("{}-{}", types::to_string(entry.backend),
                                 entry.backend_version ? entry.backend_version->text : "");
    const auto [slot, inserted] = newest_stable.try_emplace(key, set);
    if (!inserted && slot->second.config->torch.version < entry.torch.version) {
      slot->second = set;
    }
  }
  std::vector<BuildSet> sets;
  for (auto& [key, set] : newest_stable) {
    sets.push_back(std::move(set));
  }
  sets.insert(sets.end(), others.begin(), others.end());
  return sets;
}

std::string arch_variant_name(const config::BuildConfig& config, const BuildSet& set) {
  const auto& entry = *set.config;
  if (is_tvm_ffi(config)) {
    // Applicable build sets of tvm-ffi kernels always carry a tvm-ffi version.
    const auto tvm_ffi = entry.tvm_ffi ? entry.tvm_ffi->version : types::Version();
    return fmt::format("tvm-ffi{}-{}-{}", tvm_ffi.flattened(), compute_string(entry, true), set.system);
  }
  // Darwin names never carried the legacy C++ ABI tag.
  const bool darwin = set.system.ends_with("-darwin");
  return fmt::format("torch{}{}-{}-{}", entry.torch.version.flattened(), darwin ? "" : "-cxx11",
                     compute_string(entry, false), set.system);
}

std::string kernel_variant_name(const config::BuildConfig& config, const BuildSet& set) {
  const auto& entry = *set.config;
  if (is_tvm_ffi(config)) {
    return arch_variant_name(config, set);
  }
  if (!has_kernel_for(config, entry.backend)) {
    return fmt::format("torch-{}", types::to_string(entry.backend));
  }
  if (const auto abi = stable_abi_for(config, entry.backend)) {
    return fmt::format("torch-stable-abi{}-{}-{}", abi->flattened(), compute_string(entry, false),
                       set.system);
  }
  return arch_variant_name(config, set);
}

std::vector<SystemVariants> variants_for_config(const config::BuildConfig& config,
                                                const ComplianceMatrix& matrix) {
  std::vector<SystemVariants> result;
  for (const auto& system : matrix.systems) {
    SystemVariants produced;
    produced.system = system;
    for (const auto& set : applicable_build_sets(config, matrix, system)) {
      auto name = kernel_variant_name(config, set);
      const bool seen = std::any_of(produced.variants.begin(), produced.variants.end(),
                                    [&](const ProducedVariant& v) { return v.name == name; });
      if (!seen) {
        produced.variants.push_back({std::move(name), set});
      }
      auto arch_name = arch_variant_name(config, set);
      auto& arch = produced.arch_variants;
      if (std::find(arch.begin(), arch.end(), arch_name) == arch.end()) {
        arch.push_back(std::move(arch_name));
      }
    }
    result.push_back(std::move(produced));
  }
  return result;
}

}  // namespace kernelhub::variants
