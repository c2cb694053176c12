// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/config/build_config.hpp>

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>

#include <kernelhub/util/did_you_mean.hpp>

namespace kernelhub::config {

namespace {

// Indexed by the enum's value; the spellings are the reference's serde names.
constexpr std::array<std::string_view, 11> k_dependency_names = {
    "cutlass_2_10", "cutlass_3_5", "cutlass_3_6", "cutlass_3_8", "cutlass_3_9", "cutlass_4_0",
    "cutlass_4_4",  "cutlass_4_5", "sycl_tla",    "metal-cpp",   "torch",
};

template <typename T>
void append_unique(std::vector<T>& out, const T& value) {
  if (std::find(out.begin(), out.end(), value) == out.end()) {
    out.push_back(value);
  }
}

}  // namespace

std::span<const std::string_view> dependency_names() { return k_dependency_names; }

std::string_view to_string(Dependency dependency) {
  return k_dependency_names[static_cast<std::size_t>(dependency)];
}

util::Expected<Dependency> parse_dependency(std::string_view text) {
  // Case-sensitive, as serde is: "Torch" is not "torch".
  for (std::size_t i = 0; i < k_dependency_names.size(); ++i) {
    if (k_dependency_names[i] == text) {
      return static_cast<Dependency>(i);
    }
  }
  const auto hint = util::did_you_mean(text, k_dependency_names);
  return util::fail(
      fmt::format("unknown dependency \"{}\"{}{}", text, hint.empty() ? "" : "; ", hint));
}

std::vector<types::Backend> BuildConfig::backends_with_kernels() const {
  std::vector<types::Backend> result;
  for (const auto backend : general.backends) {
    const bool has_kernel = std::any_of(kernels.begin(), kernels.end(),
                                        [&](const Kernel& k) { return k.backend == backend; });
    if (has_kernel) {
      append_unique(result, backend);
    }
  }
  return result;
}

std::optional<types::Version> BuildConfig::stable_abi_for(types::Backend backend) const {
  const auto* torch = std::get_if<Torch>(&framework);
  if (torch == nullptr || !torch->stable_abi) {
    return std::nullopt;
  }
  if (const auto* all = std::get_if<types::Version>(&*torch->stable_abi)) {
    return *all;
  }
  const auto& table = std::get<std::map<types::Backend, types::Version>>(*torch->stable_abi);
  const auto it = table.find(backend);
  return it == table.end() ? std::nullopt : std::optional(it->second);
}

std::vector<std::string> BuildConfig::python_depends_for(types::Backend backend) const {
  std::vector<std::string> result;
  if (general.python_depends) {
    for (const auto& name : *general.python_depends) {
      append_unique(result, name);
    }
  }
  // Unlike the reference's `backend_python_depends` (cuda, tpu and xpu only), neuron's list
  // counts too: Nix installs it, so metadata must name it.
  const auto& specific = general.backend_table(backend);
  if (specific && specific->python_depends) {
    for (const auto& name : *specific->python_depends) {
      append_unique(result, name);
    }
  }
  return result;
}

const std::optional<BackendGeneral>& General::backend_table(types::Backend backend) const {
  static const std::optional<BackendGeneral> k_none;
  switch (backend) {
    case types::Backend::cuda:
      return cuda;
    case types::Backend::neuron:
      return neuron;
    case types::Backend::xpu:
      return xpu;
    case types::Backend::tpu:
      return tpu;
    default:
      return k_none;
  }
}

}  // namespace kernelhub::config
