// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/tvm_ffi_project.hpp>

#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/builder/step.hpp>
#include <kernelhub/codegen/template_engine.hpp>
#include <kernelhub/metadata/kernel_id.hpp>
#include <kernelhub/util/embedded_file.hpp>

namespace kernelhub::builder {

namespace {

namespace fs = std::filesystem;

// `path` is relative to templates/project/.
util::Expected<std::string> render(const std::string& path, const nlohmann::json& context) {
  const auto* file = util::find_embedded(codegen::project_template_files(), path);
  if (file == nullptr) {
    return util::fail(fmt::format("project template \"{}\" is missing from the binary", path));
  }
  return codegen::render_template(
      file->data, path, context,
      codegen::TemplateOptions{codegen::LstripBlocks::yes, codegen::TrailingNewline::keep});
}

std::string absolute(const fs::path& kernel_dir, const std::string& relative) {
  return (kernel_dir / relative).lexically_normal().generic_string();
}

nlohmann::json quoted_paths(const fs::path& kernel_dir, const std::vector<std::string>& paths) {
  auto out = nlohmann::json::array();
  for (const auto& path : paths) {
    out.push_back(codegen::cmake_quote(absolute(kernel_dir, path)));
  }
  return out;
}

// Items joined into a CMake list for use inside a quoted argument the template supplies.
std::string cmake_list(const std::vector<std::string>& items) {
  std::string joined;
  for (const auto& item : items) {
    joined += joined.empty() ? "" : ";";
    joined += item;
  }
  const auto quoted = codegen::cmake_quote(joined);
  return quoted.substr(1, quoted.size() - 2);
}

// The definition the reference's tvm-ffi preamble adds per GPU language.
std::string backend_define(types::Backend backend) {
  switch (backend) {
    case types::Backend::cuda:
      return "CUDA_KERNEL";
    case types::Backend::xpu:
      return "XPU_KERNEL";
    default:
      return "CPU_KERNEL";
  }
}

nlohmann::json kernel_entries(const config::BuildConfig& config, const fs::path& kernel_dir,
                              types::Backend backend, const codegen::CudaProjectOptions* cuda) {
  auto entries = nlohmann::json::array();
  for (const auto& kernel : config.kernels) {
    if (kernel.backend != backend) {
      continue;
    }
    std::vector<std::string> nvcc_flags = kernel.cuda_flags.value_or(std::vector<std::string>{});
    if (backend == types::Backend::cuda && cuda != nullptr) {
      const auto flags = cuda->kernel_flags.find(kernel.name);
      if (flags == cuda->kernel_flags.end()) {
        continue;  // left out by the plan (cuda-minver)
      }
      nvcc_flags = flags->second;
    }
    std::vector<std::string> includes;
    for (const auto& include : kernel.include.value_or(std::vector<std::string>{})) {
      includes.push_back(absolute(kernel_dir, include));
    }
    // Each nvcc flag only for CUDA sources: a cuda kernel's .cpp files go to the C++ compiler.
    std::vector<std::string> cuda_options;
    for (const auto& flag : nvcc_flags) {
      cuda_options.push_back(fmt::format("$<$<COMPILE_LANGUAGE:CUDA>:{}>", flag));
    }
    nlohmann::json entry;
    entry["name"] = kernel.name;
    entry["sources"] = quoted_paths(kernel_dir, kernel.src);
    entry["includes"] = cmake_list(includes);
    entry["cxx_flags"] = cmake_list(kernel.cxx_flags.value_or(std::vector<std::string>{}));
    entry["cuda_options"] = cmake_list(cuda_options);
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace

util::Expected<codegen::FileSet> tvm_ffi_project(const config::BuildConfig& config,
                                                 const fs::path& kernel_dir,
                                                 std::string_view unique_id,
                                                 types::Backend backend,
                                                 const codegen::CudaProjectOptions* cuda,
                                                 const codegen::SourceReader& read_source) {
  const auto* tvm_ffi = std::get_if<config::TvmFfi>(&config.framework);
  if (tvm_ffi == nullptr) {
    return util::fail("a tvm-ffi project needs a [tvm-ffi] kernel");
  }
  const auto python_name = config.general.name.python_name();
  const auto ops_name =
      KH_TRY(metadata::checked_kernel_id(config.general.name, backend, unique_id));

  nlohmann::json context;
  context["kernel_name"] = config.general.name.str();
  context["python_name"] = python_name;
  context["ops_name"] = ops_name;
  context["backend"] = std::string(types::to_string(backend));
  context["backend_define"] = backend_define(backend);
  context["kernel_dir"] = codegen::cmake_quote(kernel_dir.lexically_normal().generic_string());
  context["tvm_ffi_sources"] = quoted_paths(kernel_dir, tvm_ffi->src);
  context["tvm_ffi_includes"] =
      quoted_paths(kernel_dir, tvm_ffi->include.value_or(std::vector<std::string>{}));
  context["tvm_ffi_cxx_flags"] =
      cmake_list(tvm_ffi->cxx_flags.value_or(std::vector<std::string>{}));
  context["cuda"] = backend == types::Backend::cuda;
  context["kernels"] = kernel_entries(config, kernel_dir, backend, cuda);
  // The id reaches only the sources that say TVM_FFI_EXTENSION_NAME (as the reference, which
  // defines it for every source, gives it to them), so a new id recompiles those alone.
  std::vector<std::string> listed = tvm_ffi->src;
  for (const auto& kernel : config.kernels) {
    if (kernel.backend == backend) {
      listed.insert(listed.end(), kernel.src.begin(), kernel.src.end());
    }
  }
  context["namespace_sources"] = quoted_paths(
      kernel_dir, codegen::sources_naming("TVM_FFI_EXTENSION_NAME", listed, kernel_dir,
                                          read_source));

  codegen::FileSet files;
  KH_STEP(files.add("CMakeLists.txt", KH_TRY(render("tvm_ffi/CMakeLists.txt", context))));
  KH_STEP(files.add(fmt::format("tvm-ffi-ext/{}/_ops.py", python_name),
                    KH_TRY(render("tvm_ffi/_ops.py", context))));
  // The manylinux_2_28 compatibility pieces the Torch projects use too.
  for (const auto* compat : {"compat/glibc_pins.h", "compat/glibc_compat.cpp",
                              "compat/stdcxx_nonshared.py", "compat/reproducible.cmake",
                              "compat/libstdcxx.cmake"}) {
    KH_STEP(files.add(compat, KH_TRY(render(compat, context))));
  }
  return files;
}

}  // namespace kernelhub::builder
