// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/config/kernel_reader.hpp>

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include <kernelhub/util/did_you_mean.hpp>

namespace kernelhub::config::detail {

namespace {

// The keys each backend adds to the common ones (backend, depends, src, include, cxx-flags).
struct BackendKeys {
  types::Backend backend;
  std::array<std::string_view, 3> keys;
};

constexpr std::array<BackendKeys, 5> k_backend_keys = {{
    {types::Backend::cpu, {}},
    {types::Backend::cuda, {"cuda-capabilities", "cuda-flags", "cuda-minver"}},
    {types::Backend::metal, {}},
    {types::Backend::rocm, {"rocm-archs", "hip-flags"}},
    {types::Backend::xpu, {"sycl-flags"}},
}};

constexpr std::array<std::string_view, 5> k_native_backend_names = {"cpu", "cuda", "metal", "rocm",
                                                                     "xpu"};

// The backend that owns a backend-specific key, if any.
std::optional<types::Backend> owner_of(std::string_view key) {
  for (const auto& entry : k_backend_keys) {
    if (std::find(entry.keys.begin(), entry.keys.end(), key) != entry.keys.end()) {
      return entry.backend;
    }
  }
  return std::nullopt;
}

std::optional<types::Backend> read_kernel_backend(TableReader& kernel) {
  const auto name = kernel.string("backend", Need::required);
  if (!name) {
    return std::nullopt;
  }
  auto& ctx = kernel.context();
  const auto& node = *kernel.table().get("backend");
  const auto native =
      std::find(k_native_backend_names.begin(), k_native_backend_names.end(), *name);
  if (native != k_native_backend_names.end()) {
    return types::parse_backend(*name).value();
  }
  const auto known = std::find(types::k_backend_names.begin(), types::k_backend_names.end(), *name);
  if (known != types::k_backend_names.end()) {
    ctx.error(node.source(), fmt::format("backend \"{}\" has no native kernels", *name),
              fmt::format("{} kernels are Python only: remove [{}] and use [torch-noarch]", *name,
                          kernel.path()));
    return std::nullopt;
  }
  ctx.error(node.source(), fmt::format("unknown kernel backend \"{}\"", *name),
            choice_hint(*name, k_native_backend_names));
  return std::nullopt;
}

Kernel read_kernel(const std::string& name, TableReader& reader) {
  auto& ctx = reader.context();
  Kernel kernel;
  kernel.name = name;
  const auto backend = read_kernel_backend(reader);
  kernel.backend = backend.value_or(types::Backend::cpu);
  kernel.depends = read_dependencies(reader, Need::required).value_or(std::vector<Dependency>{});
  kernel.src = reader.strings("src", Need::required).value_or(std::vector<std::string>{});
  kernel.include = reader.strings("include");
  kernel.cxx_flags = reader.strings("cxx-flags");
  // With no usable backend, the backend-specific keys are still type-checked, but none is
  // reported as misplaced: which backend was meant is unknown.
  const auto wants = [&](types::Backend b) { return !backend || *backend == b; };
  if (wants(types::Backend::cuda)) {
    kernel.cuda_capabilities = reader.strings("cuda-capabilities");
    kernel.cuda_flags = reader.strings("cuda-flags");
    kernel.cuda_minver = reader.version("cuda-minver");
  }
  if (wants(types::Backend::rocm)) {
    kernel.rocm_archs = reader.strings("rocm-archs");
    kernel.hip_flags = reader.strings("hip-flags");
  }
  if (wants(types::Backend::xpu)) {
    kernel.sycl_flags = reader.strings("sycl-flags");
  }
  if (!backend) {
    // Keep the model consistent with its contract: backend-specific keys only on their backend.
    kernel.cuda_capabilities.reset();
    kernel.cuda_flags.reset();
    kernel.cuda_minver.reset();
    kernel.rocm_archs.reset();
    kernel.hip_flags.reset();
    kernel.sycl_flags.reset();
  }
  reader.finish([&](std::string_view key, const toml::key& where) {
    const auto owner = owner_of(key);
    if (!owner || !backend) {
      return false;
    }
    ctx.error(where.source(),
              fmt::format("key \"{}\" is for {} kernels, but [{}] has backend \"{}\"", key,
                          types::to_string(*owner), reader.path(), types::to_string(*backend)),
              fmt::format("remove it, or move it to a kernel with backend = \"{}\"",
                          types::to_string(*owner)));
    return true;
  });
  return kernel;
}

}  // namespace

std::optional<std::vector<Dependency>> read_dependencies(TableReader& table, Need need) {
  const auto names = table.strings("depends", need);
  if (!names) {
    return std::nullopt;
  }
  const auto& array = *table.table().get("depends")->as_array();
  std::vector<Dependency> result;
  bool ok = true;
  for (std::size_t i = 0; i < names->size(); ++i) {
    const auto& name = (*names)[i];
    if (auto dependency = parse_dependency(name)) {
      result.push_back(*dependency);
      continue;
    }
    ok = false;
    table.context().error(array.get(i)->source(), fmt::format("unknown dependency \"{}\"", name),
                          choice_hint(name, dependency_names()));
  }
  if (!ok) {
    return std::nullopt;
  }
  return result;
}

void for_each_kernel_table(
    TableReader& root, const std::function<void(const std::string& name, TableReader&)>& read) {
  const auto* kernels = root.subtable("kernel");
  if (kernels == nullptr) {
    return;
  }
  auto& ctx = root.context();
  for (const auto& [key, node] : entries_in_file_order(*kernels)) {
    const auto path = fmt::format("kernel.{}", key->str());
    const auto* table = node->as_table();
    ctx.remember(path, table != nullptr && !table->is_inline() ? table->source() : key->source());
    if (table == nullptr) {
      ctx.error(node->source(), fmt::format("expected a table for \"{}\", found {}", path,
                                            describe_value(*node)),
                fmt::format("write the kernel as a [{}] table", path));
      continue;
    }
    TableReader reader(ctx, *table, path);
    read(std::string(key->str()), reader);
  }
}

std::vector<Kernel> read_kernels(TableReader& root) {
  std::vector<Kernel> kernels;
  for_each_kernel_table(root, [&](const std::string& name, TableReader& reader) {
    kernels.push_back(read_kernel(name, reader));
  });
  return kernels;
}

}  // namespace kernelhub::config::detail
