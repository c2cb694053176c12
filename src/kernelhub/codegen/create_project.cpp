// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/codegen/create_project.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/codegen/template_engine.hpp>
#include <kernelhub/metadata/kernel_id.hpp>

// Runs a step yielding util::Expected<void>, returning its error (KH_TRY needs a value).
#define KH_STEP(expr)                                            \
  do {                                                           \
    if (auto kh_step_result_ = (expr); !kh_step_result_) {       \
      return tl::unexpected(std::move(kh_step_result_).error()); \
    }                                                            \
  } while (false)

namespace kernelhub::codegen {

namespace {

namespace fs = std::filesystem;

util::Expected<std::string> render_project_template(std::string_view path,
                                                    const nlohmann::json& context) {
  const auto* file = util::find_embedded(project_template_files(), path);
  if (file == nullptr) {
    return util::fail(fmt::format("project template \"{}\" is missing from the binary", path));
  }
  return render_template(file->data, std::string(path), context,
                         TemplateOptions{LstripBlocks::yes, TrailingNewline::keep});
}

std::string absolute_source(const fs::path& kernel_dir, const std::string& relative) {
  return cmake_quote((kernel_dir / relative).lexically_normal().generic_string());
}

nlohmann::json quoted_paths(const fs::path& kernel_dir,
                            const std::optional<std::vector<std::string>>& paths) {
  auto out = nlohmann::json::array();
  for (const auto& path : paths.value_or(std::vector<std::string>{})) {
    out.push_back(absolute_source(kernel_dir, path));
  }
  return out;
}

// A CMake list (';'-separated) inside a quoted argument, for source properties.
std::string cmake_list(const std::vector<std::string>& items) {
  std::string joined;
  for (const auto& item : items) {
    if (!joined.empty()) {
      joined += ';';
    }
    joined += item;
  }
  const auto quoted = cmake_quote(joined);
  return quoted.substr(1, quoted.size() - 2);  // the template supplies the quotes
}

// The per-backend compile definition the kernel's sources test (`#if defined(CPU_KERNEL)`).
std::string backend_define(types::Backend backend) {
  switch (backend) {
    case types::Backend::cuda:
      return "CUDA_KERNEL USE_CUDA=1";
    case types::Backend::rocm:
      return "ROCM_KERNEL USE_ROCM=1";
    case types::Backend::metal:
      return "METAL_KERNEL";
    case types::Backend::xpu:
      return "XPU_KERNEL USE_XPU";
    default:
      return "CPU_KERNEL";
  }
}

// Each nvcc flag in its own CUDA-only generator expression: a cuda kernel's .cpp sources go
// to the C++ compiler, which must not see them.
std::string cuda_only_options(const std::vector<std::string>& flags) {
  std::vector<std::string> wrapped;
  for (const auto& flag : flags) {
    wrapped.push_back(fmt::format("$<$<COMPILE_LANGUAGE:CUDA>:{}>", flag));
  }
  return cmake_list(wrapped);
}

// Whether a listed file is a translation unit of its own (else a header or other input).
bool is_compiled_source(const std::string& relative) {
  static constexpr std::array<std::string_view, 10> k_extensions = {
      ".cpp", ".cc", ".cxx", ".c++", ".c", ".C", ".cu", ".hip", ".mm", ".m"};
  const auto extension = fs::path(relative).extension().string();
  return std::find(k_extensions.begin(), k_extensions.end(), extension) != k_extensions.end();
}


util::Expected<FileSet> torch_project(const config::BuildConfig& config,
                                      const config::Torch& torch, const fs::path& kernel_dir,
                                      std::string_view unique_id, types::Backend backend,
                                      const CudaProjectOptions* cuda,
                                      const SourceReader& read_source) {
  const auto python_name = config.general.name.python_name();
  const auto ops_name = KH_TRY(metadata::checked_kernel_id(config.general.name, backend, unique_id));
  std::vector<std::string> listed = torch.src.value_or(std::vector<std::string>{});

  nlohmann::json context;
  context["kernel_name"] = config.general.name.str();
  context["python_name"] = python_name;
  context["ops_name"] = ops_name;
  context["module_target"] = module_target(config.general.name, backend);
  context["backend"] = std::string(types::to_string(backend));
  context["backend_define"] = backend_define(backend);
  context["kernel_dir"] = cmake_quote(kernel_dir.lexically_normal().generic_string());
  context["torch_sources"] = quoted_paths(kernel_dir, torch.src);
  context["torch_includes"] = quoted_paths(kernel_dir, torch.include);
  context["torch_cxx_flags"] = cmake_list(torch.cxx_flags.value_or(std::vector<std::string>{}));
  const auto stable_abi = config.stable_abi_for(backend);
  context["stable_abi"] = stable_abi ? stable_abi->to_string() : "";
  context["torch_target_version"] = stable_abi ? torch_target_version(*stable_abi) : "";
  context["cuda"] = backend == types::Backend::cuda;
  context["kernels"] = nlohmann::json::array();
  for (const auto& kernel : config.kernels) {
    if (kernel.backend != backend) {
      continue;
    }
    std::vector<std::string> nvcc_flags = kernel.cuda_flags.value_or(std::vector<std::string>{});
    if (backend == types::Backend::cuda && cuda != nullptr) {
      const auto flags = cuda->kernel_flags.find(kernel.name);
      if (flags == cuda->kernel_flags.end()) {
        continue;  // left out by the builder (cuda-minver)
      }
      nvcc_flags = flags->second;
    }
    std::vector<std::string> includes;
    for (const auto& include : kernel.include.value_or(std::vector<std::string>{})) {
      includes.push_back((kernel_dir / include).lexically_normal().generic_string());
    }
    for (const auto& source : kernel.src) {
      listed.push_back(source);
    }
    nlohmann::json entry;
    entry["name"] = kernel.name;
    entry["sources"] = quoted_paths(kernel_dir, kernel.src);
    entry["includes"] = cmake_list(includes);
    entry["cxx_flags"] = cmake_list(kernel.cxx_flags.value_or(std::vector<std::string>{}));
    entry["cuda_options"] = cuda_only_options(nvcc_flags);
    context["kernels"].push_back(std::move(entry));
  }

  context["namespace_sources"] = nlohmann::json::array();
  for (const auto& source :
       sources_naming("TORCH_EXTENSION_NAME", listed, kernel_dir, read_source)) {
    context["namespace_sources"].push_back(absolute_source(kernel_dir, source));
  }

  FileSet files;
  KH_STEP(files.add("CMakeLists.txt", KH_TRY(render_project_template("CMakeLists.txt", context))));
  KH_STEP(files.add("torch-ext/registration.h",
                   KH_TRY(render_project_template("registration.h", context))));
  KH_STEP(files.add("torch-ext/kernelhub_ops_name.h",
                   KH_TRY(render_project_template("kernelhub_ops_name.h", context))));
  // manylinux_2_28 on a newer glibc: the pins every C++ source includes first, and the
  // definitions that replace glibc symbols which have no older version (docs/build.md).
  for (const auto* compat : {"compat/glibc_pins.h", "compat/glibc_compat.cpp",
                              "compat/stdcxx_nonshared.py", "compat/reproducible.cmake",
                              "compat/compiler_cache.cmake", "compat/libstdcxx.cmake"}) {
    KH_STEP(files.add(compat, KH_TRY(render_project_template(compat, context))));
  }
  KH_STEP(files.add(fmt::format("torch-ext/{}/_ops.py", python_name),
                   KH_TRY(render_project_template("_ops.py", context))));
  return files;
}

util::Expected<FileSet> noarch_project(const config::BuildConfig& config,
                                       std::string_view unique_id) {
  const auto python_name = config.general.name.python_name();
  // Every backend's id must be a valid identifier; checking one checks the shared parts.
  KH_TRY(metadata::checked_kernel_id(config.general.name, types::Backend::cpu, unique_id));
  nlohmann::json context;
  context["python_name"] = python_name;
  context["unique_id"] = std::string(unique_id);
  FileSet files;
  KH_STEP(files.add(fmt::format("torch-ext/{}/_ops.py", python_name),
                   KH_TRY(render_project_template("_ops_noarch.py", context))));
  return files;
}

}  // namespace

std::vector<std::string> sources_naming(std::string_view macro,
                                        const std::vector<std::string>& listed,
                                        const fs::path& kernel_dir,
                                        const SourceReader& read_source) {
  std::vector<std::string> compiled;
  std::vector<std::string> mentioning;
  bool everything = !read_source;
  for (const auto& relative : listed) {
    const bool tu = is_compiled_source(relative);
    if (tu) {
      compiled.push_back(relative);
    }
    if (everything) {
      continue;
    }
    const auto text = read_source((kernel_dir / relative).lexically_normal());
    if (text && text->find(macro) == std::string::npos) {
      continue;
    }
    if (tu) {
      mentioning.push_back(relative);
    } else {
      everything = true;
    }
  }
  return everything ? compiled : mentioning;
}

std::string module_target(const types::KernelName& name, types::Backend backend) {
  return fmt::format("_{}_{}", name.python_name(), types::to_string(backend));
}

std::string torch_target_version(const types::Version& abi) {
  // Only major.minor count: torch's own TORCH_VERSION_<major>_<minor>_0 macros leave the patch
  // and ABI-tag bytes zero, and the stable ABI is versioned by release.
  const std::uint64_t value = ((abi.major() & 0xffU) << 56U) | ((abi.minor() & 0xffU) << 48U);
  return fmt::format("0x{:016x}", value);
}

std::string cmake_quote(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '\\' || c == '"' || c == '$') {
      out += '\\';
    }
    out += c;
  }
  out += '"';
  return out;
}

util::Expected<void> add_python_packaging(FileSet& project, const config::BuildConfig& config,
                                          const fs::path& kernel_dir, std::string_view unique_id,
                                          types::Backend backend) {
  const auto python_name = config.general.name.python_name();
  const auto& files = project.files();
  const bool native = std::any_of(files.begin(), files.end(), [](const GeneratedFile& file) {
    return file.path == "CMakeLists.txt";
  });
  // Python string literals: JSON's escapes are Python's for these.
  const auto literal = [](std::string_view text) { return nlohmann::json(text).dump(); };
  nlohmann::json context;
  context["kernel_name"] = config.general.name.str();
  context["python_name"] = python_name;
  context["python_name_literal"] = literal(python_name);
  context["distribution_name"] = literal(config.general.name.str());
  context["version"] = config.general.version;
  context["kernel_package_literal"] =
      literal((kernel_dir / "torch-ext" / python_name).lexically_normal().string());
  context["ops_name_literal"] =
      literal(native ? KH_TRY(metadata::checked_kernel_id(config.general.name, backend, unique_id))
                     : std::string());
  context["module_file_literal"] =
      literal(native ? module_target(config.general.name, backend) + ".abi3.so" : std::string());
  KH_STEP(project.add("pyproject.toml", KH_TRY(render_project_template("pyproject.toml", context))));
  KH_STEP(project.add("setup.py", KH_TRY(render_project_template("setup.py", context))));
  return {};
}

util::Expected<FileSet> create_project(const config::BuildConfig& config,
                                       const fs::path& kernel_dir, std::string_view unique_id,
                                       types::Backend backend, const CudaProjectOptions* cuda,
                                       const SourceReader& read_source) {
  const auto with_kernels = config.backends_with_kernels();
  const bool has_kernels =
      std::find(with_kernels.begin(), with_kernels.end(), backend) != with_kernels.end();
  if (const auto* torch = std::get_if<config::Torch>(&config.framework); torch && has_kernels) {
    return torch_project(config, *torch, kernel_dir, unique_id, backend, cuda, read_source);
  }
  // A [torch] backend without [kernel.*] of its own is built as noarch, as the reference's
  // Nix does, so it gets the noarch _ops.py.
  if (config.is_noarch() || std::holds_alternative<config::Torch>(config.framework)) {
    return noarch_project(config, unique_id);
  }
  return util::fail("tvm-ffi kernels cannot be built by kernel-builder yet");
}

}  // namespace kernelhub::codegen

#undef KH_STEP
