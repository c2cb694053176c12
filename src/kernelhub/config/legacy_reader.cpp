// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/config/legacy_reader.hpp>

#include <algorithm>
#include <array>
#include <set>

#include <fmt/format.h>

#include <kernelhub/config/framework_reader.hpp>
#include <kernelhub/config/general_reader.hpp>
#include <kernelhub/config/kernel_reader.hpp>
#include <kernelhub/util/did_you_mean.hpp>

namespace kernelhub::config::detail {

namespace {

// What the historic converters gave `universal` kernels.
constexpr std::array k_universal_backends = {
    types::Backend::cann,   types::Backend::cpu,  types::Backend::cuda, types::Backend::metal,
    types::Backend::neuron, types::Backend::rocm, types::Backend::xpu};

// v2's python-depends was a closed enum; the names map onto today's scopes.
constexpr std::array<std::string_view, 2> k_v2_python_depends = {"einops", "nvidia-cutlass-dsl"};

std::vector<types::Backend> derived_backends(bool universal, const std::vector<Kernel>& kernels) {
  if (universal) {
    return {k_universal_backends.begin(), k_universal_backends.end()};
  }
  std::set<types::Backend> used;
  for (const auto& kernel : kernels) {
    used.insert(kernel.backend);
  }
  return {used.begin(), used.end()};
}

// [torch] is required in v1 and v2; `universal` turns it into [torch-noarch].
Framework legacy_framework(TableReader& root, bool versions, bool* universal_in_torch) {
  const auto* table = root.subtable("torch", Need::required);
  if (table == nullptr) {
    return TorchNoarch{};
  }
  TableReader torch(root.context(), *table, "torch");
  auto result = read_legacy_torch(torch, versions);
  if (universal_in_torch != nullptr) {
    *universal_in_torch = torch.boolean("universal").value_or(false);
  }
  torch.finish();
  if (universal_in_torch != nullptr && *universal_in_torch) {
    TorchNoarch noarch;
    noarch.pyext = result.pyext;
    return noarch;
  }
  return result;
}

void read_v2_python_depends(TableReader& general, General& out) {
  const auto names = general.strings("python-depends");
  if (!names) {
    return;
  }
  const auto& array = *general.table().get("python-depends")->as_array();
  for (std::size_t i = 0; i < names->size(); ++i) {
    const auto& name = (*names)[i];
    if (name == "einops") {
      out.python_depends = out.python_depends.value_or(std::vector<std::string>{});
      out.python_depends->push_back(name);
    } else if (name == "nvidia-cutlass-dsl") {
      if (!out.cuda) {
        out.cuda = BackendGeneral{};
      }
      out.cuda->python_depends = out.cuda->python_depends.value_or(std::vector<std::string>{});
      out.cuda->python_depends->push_back(name);
    } else {
      general.context().error(array.get(i)->source(),
                              fmt::format("unknown python dependency \"{}\"", name),
                              choice_hint(name, k_v2_python_depends));
    }
  }
}

// One v1 kernel becomes one or two: `cuda-hipify` sources are built for ROCm too, as a second
// kernel named "<name>_rocm".
void read_v1_kernel(const std::string& name, TableReader& reader, std::vector<Kernel>& kernels) {
  auto& ctx = reader.context();
  Kernel kernel;
  kernel.name = name;
  const auto capabilities = reader.strings("cuda-capabilities");
  const auto rocm_archs = reader.strings("rocm-archs");
  const auto language = reader.string("language").value_or("cuda");
  kernel.depends = read_dependencies(reader, Need::required).value_or(std::vector<Dependency>{});
  kernel.include = reader.strings("include");
  kernel.src = reader.strings("src", Need::required).value_or(std::vector<std::string>{});
  reader.finish();
  if (language == "metal") {
    kernel.backend = types::Backend::metal;
    kernels.push_back(std::move(kernel));
    return;
  }
  if (language != "cuda" && language != "cuda-hipify") {
    constexpr std::array<std::string_view, 3> k_languages = {"cuda", "cuda-hipify", "metal"};
    ctx.error(reader.table().get("language")->source(),
              fmt::format("unknown kernel language \"{}\"", language),
              choice_hint(language, k_languages));
    return;
  }
  kernel.backend = types::Backend::cuda;
  kernel.cuda_capabilities = capabilities;
  if (language == "cuda-hipify") {
    Kernel rocm = kernel;
    rocm.name = name + "_rocm";
    rocm.backend = types::Backend::rocm;
    rocm.cuda_capabilities.reset();
    rocm.rocm_archs = rocm_archs;
    kernels.push_back(std::move(kernel));
    kernels.push_back(std::move(rocm));
    return;
  }
  kernels.push_back(std::move(kernel));
}

void check_unique_names(ReadContext& ctx, const std::vector<Kernel>& kernels) {
  std::set<std::string> seen;
  for (const auto& kernel : kernels) {
    if (!seen.insert(kernel.name).second) {
      ctx.report(util::Severity::error, ctx.where("kernel." + kernel.name),
                 fmt::format("kernel \"{}\" is defined twice after expanding cuda-hipify kernels",
                             kernel.name),
                 "rename the kernel that clashes with the generated ROCm copy");
    }
  }
}

}  // namespace

BuildConfig read_edition1(TableReader& root) {
  BuildConfig config;
  config.general.name = placeholder_name();
  config.framework = TorchNoarch{};
  if (const auto* table = root.subtable("general", Need::required)) {
    TableReader general(root.context(), *table, "general");
    if (auto name = read_kernel_name(general, "name")) {
      config.general.name = std::move(*name);
    }
    general.finish();
  }
  bool universal = false;
  config.framework = legacy_framework(root, /*versions=*/false, &universal);
  for_each_kernel_table(root, [&](const std::string& name, TableReader& reader) {
    read_v1_kernel(name, reader, config.kernels);
  });
  check_unique_names(root.context(), config.kernels);
  root.finish();
  config.general.backends = derived_backends(universal, config.kernels);
  return config;
}

BuildConfig read_edition2(TableReader& root) {
  BuildConfig config;
  config.general.name = placeholder_name();
  config.framework = TorchNoarch{};
  bool universal = false;
  if (const auto* table = root.subtable("general", Need::required)) {
    TableReader general(root.context(), *table, "general");
    if (auto name = read_kernel_name(general, "name")) {
      config.general.name = std::move(*name);
    }
    universal = general.boolean("universal").value_or(false);
    const auto minver = general.version("cuda-minver");
    const auto maxver = general.version("cuda-maxver");
    if (minver || maxver) {
      config.general.cuda = BackendGeneral{};
      config.general.cuda->minver = minver;
      config.general.cuda->maxver = maxver;
    }
    if (const auto* hub_table = general.subtable("hub")) {
      TableReader hub(root.context(), *hub_table, "general.hub");
      config.general.hub = Hub{hub.string("repo-id"), hub.string("branch")};
      hub.finish();
    }
    read_v2_python_depends(general, config.general);
    general.finish();
  }
  config.framework = legacy_framework(root, /*versions=*/true, nullptr);
  if (universal) {
    const auto* torch = std::get_if<Torch>(&config.framework);
    TorchNoarch noarch;
    noarch.pyext = torch != nullptr ? torch->pyext : std::nullopt;
    config.framework = std::move(noarch);
  }
  config.kernels = read_kernels(root);
  root.finish();
  config.general.backends = derived_backends(universal, config.kernels);
  return config;
}

}  // namespace kernelhub::config::detail
