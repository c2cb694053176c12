// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/config/build_toml_writer.hpp>

#include <algorithm>
#include <optional>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace kernelhub::config {

namespace {

constexpr std::size_t k_max_inline_width = 80;

std::vector<std::string> to_strings(const std::vector<types::Backend>& backends) {
  std::vector<std::string> result;
  for (auto backend : backends) {
    result.emplace_back(types::to_string(backend));
  }
  return result;
}

std::vector<std::string> to_strings(const std::vector<Dependency>& dependencies) {
  std::vector<std::string> result;
  for (auto dependency : dependencies) {
    result.emplace_back(to_string(dependency));
  }
  return result;
}

std::string inline_kernel_dependency(const KernelDependency& dependency) {
  std::string result = fmt::format("{{ repo-id = {}", toml_string(dependency.repo_id));
  if (dependency.version) {
    result += fmt::format(", version = {}", *dependency.version);
  }
  if (dependency.revision) {
    result += fmt::format(", revision = {}", toml_string(*dependency.revision));
  }
  return result + " }";
}

// Builds the text one table at a time; a blank line separates tables.
class Emitter {
 public:
  void table(std::string_view dotted_name) {
    if (!m_out.empty()) {
      m_out += '\n';
    }
    m_out += fmt::format("[{}]\n", dotted_name);
  }

  void raw(std::string_view key, std::string_view value) {
    m_out += fmt::format("{} = {}\n", key, value);
  }

  void string(std::string_view key, const std::optional<std::string>& value) {
    if (value) {
      raw(key, toml_string(*value));
    }
  }

  void version(std::string_view key, const std::optional<types::Version>& value) {
    if (value) {
      raw(key, toml_string(value->to_string()));
    }
  }

  // Elements are already formatted TOML values (strings or inline tables).
  void formatted_array(std::string_view key, const std::vector<std::string>& elements) {
    std::string joined;
    for (const auto& element : elements) {
      joined += (joined.empty() ? "" : ", ") + element;
    }
    const std::string one_line = fmt::format("{} = [{}]", key, joined);
    if (elements.size() <= 1 || one_line.size() <= k_max_inline_width) {
      m_out += one_line + '\n';
      return;
    }
    m_out += fmt::format("{} = [\n", key);
    for (const auto& element : elements) {
      m_out += fmt::format("    {},\n", element);
    }
    m_out += "]\n";
  }

  void strings(std::string_view key, const std::optional<std::vector<std::string>>& values) {
    if (!values) {
      return;
    }
    std::vector<std::string> quoted;
    for (const auto& value : *values) {
      quoted.push_back(toml_string(value));
    }
    formatted_array(key, quoted);
  }

  void kernel_depends(const std::optional<std::vector<KernelDependency>>& dependencies) {
    if (!dependencies) {
      return;
    }
    std::vector<std::string> tables;
    for (const auto& dependency : *dependencies) {
      tables.push_back(inline_kernel_dependency(dependency));
    }
    formatted_array("kernel-depends", tables);
  }

  std::string take() { return std::move(m_out); }

 private:
  std::string m_out;
};

void emit_backend_general(Emitter& out, std::string_view name,
                          const std::optional<BackendGeneral>& table) {
  if (!table) {
    return;
  }
  out.table(fmt::format("general.{}", name));
  out.version("minver", table->minver);
  out.version("maxver", table->maxver);
  out.kernel_depends(table->kernel_depends);
  out.strings("python-depends", table->python_depends);
}

void emit_general(Emitter& out, const General& general) {
  out.table("general");
  out.raw("name", toml_string(general.name.str()));
  out.raw("version", fmt::format("{}", general.version));
  out.raw("edition", fmt::format("{}", k_current_edition));
  out.raw("license", toml_string(general.license));
  if (general.upstream) {
    out.raw("upstream", toml_string(general.upstream->original()));
  }
  if (general.source) {
    out.raw("source", toml_string(general.source->original()));
  }
  out.strings("backends", to_strings(general.backends));
  out.kernel_depends(general.kernel_depends);
  out.strings("python-depends", general.python_depends);
  // Sub-tables in the reference's field order: cuda, hub, neuron, tpu, xpu.
  emit_backend_general(out, "cuda", general.cuda);
  if (general.hub) {
    out.table("general.hub");
    out.string("repo-id", general.hub->repo_id);
    out.string("branch", general.hub->branch);
  }
  emit_backend_general(out, "neuron", general.neuron);
  emit_backend_general(out, "tpu", general.tpu);
  emit_backend_general(out, "xpu", general.xpu);
}

void emit_framework(Emitter& out, const Torch& torch) {
  out.table("torch");
  out.strings("include", torch.include);
  out.version("minver", torch.minver);
  out.version("maxver", torch.maxver);
  out.strings("pyext", torch.pyext);
  out.strings("src", torch.src);
  const auto* single_abi =
      torch.stable_abi ? std::get_if<types::Version>(&*torch.stable_abi) : nullptr;
  if (single_abi != nullptr) {
    out.raw("stable-abi", toml_string(single_abi->to_string()));
  }
  out.strings("cxx-flags", torch.cxx_flags);
  const auto* per_backend =
      torch.stable_abi ? std::get_if<std::map<types::Backend, types::Version>>(&*torch.stable_abi)
                       : nullptr;
  if (per_backend != nullptr) {
    out.table("torch.stable-abi");
    for (const auto& [backend, version] : *per_backend) {
      out.raw(types::to_string(backend), toml_string(version.to_string()));
    }
  }
}

void emit_framework(Emitter& out, const TorchNoarch& noarch) {
  out.table("torch-noarch");
  out.strings("pyext", noarch.pyext);
  // The reference's TorchNoarch has no kebab-case renaming: snake_case is what it accepts.
  out.strings("cuda_capabilities", noarch.cuda_capabilities);
  out.strings("rocm_archs", noarch.rocm_archs);
}

void emit_framework(Emitter& out, const TvmFfi& tvm_ffi) {
  out.table("tvm-ffi");
  out.strings("include", tvm_ffi.include);
  out.strings("pyext", tvm_ffi.pyext);
  out.strings("src", tvm_ffi.src);
  out.strings("cxx-flags", tvm_ffi.cxx_flags);
}

void emit_kernel(Emitter& out, const Kernel& kernel) {
  using types::Backend;
  out.table(fmt::format("kernel.{}", toml_key(kernel.name)));
  out.raw("backend", toml_string(types::to_string(kernel.backend)));
  // Per-variant field order of the reference's `v5::Kernel` enum.
  if (kernel.backend == Backend::cuda) {
    out.strings("cuda-capabilities", kernel.cuda_capabilities);
    out.strings("cuda-flags", kernel.cuda_flags);
    out.version("cuda-minver", kernel.cuda_minver);
  }
  out.strings("cxx-flags", kernel.cxx_flags);
  out.strings("depends", to_strings(kernel.depends));
  if (kernel.backend == Backend::rocm) {
    out.strings("rocm-archs", kernel.rocm_archs);
    out.strings("hip-flags", kernel.hip_flags);
  }
  if (kernel.backend == Backend::xpu) {
    out.strings("sycl-flags", kernel.sycl_flags);
  }
  out.strings("include", kernel.include);
  out.strings("src", kernel.src);
}

}  // namespace

std::string toml_string(std::string_view value) {
  // Always a double-quoted basic string on one line, as hand-written build.toml files (and
  // the reference's serialiser) have them: no literal or multi-line strings.
  const toml::value<std::string> node{std::string(value)};
  std::ostringstream stream;
  stream << toml::toml_formatter(node, toml::format_flags::allow_unicode_strings);
  return stream.str();
}

std::string toml_key(std::string_view key) {
  const bool bare = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
  return bare ? std::string(key) : toml_string(key);
}

std::string toml_inline_array(std::span<const std::string> values) {
  std::string result = "[";
  for (const auto& value : values) {
    result += (result.size() > 1 ? ", " : "") + toml_string(value);
  }
  return result + "]";
}

std::string write_build_toml(const BuildConfig& config) {
  Emitter out;
  emit_general(out, config.general);
  std::visit([&](const auto& framework) { emit_framework(out, framework); }, config.framework);
  for (const auto& kernel : config.kernels) {
    emit_kernel(out, kernel);
  }
  return out.take();
}

}  // namespace kernelhub::config
