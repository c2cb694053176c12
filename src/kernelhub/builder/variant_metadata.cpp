// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/variant_metadata.hpp>

#include <variant>

namespace kernelhub::builder {

metadata::Metadata variant_metadata(const config::BuildConfig& config, types::Backend backend,
                                    const std::string& id,
                                    const std::optional<metadata::GitStatus>& kernel_git,
                                    const std::string& builder_version) {
  const auto& general = config.general;
  metadata::Metadata meta{
      .name = general.name,
      .id = id,
      .version = general.version,
      .kernels_minver = std::nullopt,  // build.toml has no key for it
      .license = general.license,
      .upstream = general.upstream,
      .source = general.source,
      .python_depends = config.python_depends_for(backend),
      .kernel_depends = general.kernel_depends.value_or(std::vector<config::KernelDependency>{}),
      .backend = metadata::BackendInfo{backend, std::nullopt},
      .digest = std::nullopt,
      .provenance = std::nullopt,
  };
  if (const auto& table = general.backend_table(backend); table && table->kernel_depends) {
    meta.kernel_depends.insert(meta.kernel_depends.end(), table->kernel_depends->begin(),
                               table->kernel_depends->end());
  }
  // Arch builds would record the archs actually compiled; cpu has none. Noarch builds copy
  // the declared ones.
  if (const auto* noarch = std::get_if<config::TorchNoarch>(&config.framework)) {
    if (backend == types::Backend::cuda) {
      meta.backend.archs = noarch->cuda_capabilities;
    } else if (backend == types::Backend::rocm) {
      meta.backend.archs = noarch->rocm_archs;
    }
  }
  meta.provenance = metadata::Provenance{metadata::KernelBuilderProvenance{builder_version, {}},
                                         kernel_git, true};
  return meta;
}

}  // namespace kernelhub::builder
