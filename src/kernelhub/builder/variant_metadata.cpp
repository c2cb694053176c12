// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/variant_metadata.hpp>

#include <charconv>
#include <cstdlib>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include <kernelhub/util/file_io.hpp>

namespace kernelhub::builder {

std::optional<std::int64_t> source_date_epoch(std::optional<std::int64_t> commit_time) {
  if (const char* given = std::getenv("SOURCE_DATE_EPOCH"); given != nullptr && *given != '\0') {
    const std::string_view text(given);
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc() && end == text.data() + text.size() && value >= 0) {
      return value;
    }
  }
  return commit_time;
}

void set_source_date_epoch(std::vector<Command>& commands, const BuildSource& source) {
  if (!source.source_date_epoch) {
    return;
  }
  for (auto& command : commands) {
    command.env.emplace_back("SOURCE_DATE_EPOCH", std::to_string(*source.source_date_epoch));
  }
}

metadata::BuildProvenance build_provenance(const BuildSource& source,
                                           const std::optional<std::filesystem::path>& build_tree,
                                           const std::map<std::string, std::string>& tools) {
  metadata::BuildProvenance build{source.origin, source.source_date_epoch, tools, {}};
  if (!build_tree) {
    return build;
  }
  const auto text = util::read_file(*build_tree / "kernelhub-toolchain.json");
  if (!text) {
    return build;
  }
  const auto json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) {
    return build;
  }
  const auto text_of = [](const nlohmann::json& object, const char* key) {
    const auto found = object.find(key);
    return found != object.end() && found->is_string() ? found->get<std::string>()
                                                       : std::string();
  };
  if (auto cmake = text_of(json, "cmake"); !cmake.empty()) {
    build.toolchain["cmake"] = std::move(cmake);
  }
  if (auto type = text_of(json, "build-type"); !type.empty()) {
    build.flags["build-type"] = std::move(type);
  }
  for (const char* language : {"cxx", "cuda"}) {
    const auto entry = json.find(language);
    if (entry == json.end() || !entry->is_object()) {
      continue;
    }
    build.toolchain[language] = text_of(*entry, "id") + " " + text_of(*entry, "version");
    build.flags[language] = text_of(*entry, "flags");
  }
  return build;
}

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
                                         kernel_git, std::nullopt, true};
  return meta;
}

}  // namespace kernelhub::builder
