// SPDX-License-Identifier: Apache-2.0
// libkernelhub, under the C++ API (include/kernelhub/kernelhub.hpp): the variant choice for the
// process the header describes (detail::Process), then dlopen of the variant's library. No
// libtorch here: what needs it is inline in the header, compiled with the program's own torch.
#include <kernelhub/library.hpp>

#include <dlfcn.h>

#include <iostream>
#include <map>
#include <mutex>
#include <stdexcept>

#include <kernelhub/loader/hub_kernel.hpp>
#include <kernelhub/loader/kernel_module.hpp>
#include <kernelhub/loader/local_variant.hpp>
#include <kernelhub/loader/signature_requirement.hpp>

namespace kernelhub {

namespace fs = std::filesystem;

namespace {

variants::SystemInfo system_of(const detail::Process& process) {
  variants::SystemInfo system;
  system.torch_version = variants::ReleaseVersion::from_parts(
      std::to_string(process.torch_major), std::to_string(process.torch_minor));
#if defined(__linux__)
  system.cxx11_abi = process.cxx11_abi;
#endif
  if (!process.cpu.empty()) {
    system.cpu = process.cpu;
  }
  if (process.backend == "cuda") {
    system.backend = {types::Backend::cuda,
                      variants::ReleaseVersion::from_parts(std::to_string(process.backend_major),
                                                           std::to_string(process.backend_minor))};
  } else if (!process.backend.empty()) {
    throw std::runtime_error("kernelhub: unknown backend \"" + process.backend +
                             "\" in the process description (expected \"cuda\" or none)");
  }
  return system;
}

fs::path find_library(const fs::path& package_dir, const std::string& id) {
  if (fs::exists(package_dir / (id + ".abi3.so"))) {
    return package_dir / (id + ".abi3.so");
  }
  for (const auto& entry : fs::directory_iterator(package_dir)) {
    if (entry.path().filename().string().ends_with(".so")) {
      return entry.path();
    }
  }
  throw std::runtime_error("no compiled library (" + id + ".abi3.so) in \"" +
                           package_dir.string() + "\": a noarch kernel has no C++ ops");
}

}  // namespace

namespace detail {

OpenedVariant get_local_kernel(const fs::path& path, const std::optional<std::string>& backend,
                               const Process& process) {
  auto system = system_of(process);
  if (auto applied = variants::apply_backend(system, backend); !applied) {
    throw std::runtime_error(applied.error().message);
  }
  // No GPU capability check here yet: CUDA's device properties need the CUDA headers.
  auto match = loader::find_local_variant(path, system, loader::DeviceArch{});
  if (!match) {
    throw std::runtime_error(match.error().message);
  }
  return open_variant(match->variant_path);
}

OpenedVariant get_kernel(const std::string& repo_id, const GetKernelOptions& options,
                         const Process& process) {
  // backend= is applied by the core per request, against the system as described.
  const auto context =
      loader::HubLoadContext::from_environment(system_of(process), loader::DeviceArch{});
  loader::HubKernelRequest request;
  request.repo_id = repo_id;
  request.version = options.version;
  request.revision = options.revision;
  request.backend = options.backend;
  request.check_trust = !options.trust_remote_code;
  auto kernel = loader::install_hub_kernel(context, request);
  if (!kernel) {
    throw std::runtime_error(kernel.error().message);
  }
  for (const auto& warning : kernel->warnings) {
    std::cerr << "kernelhub: warning: " << warning << "\n";
  }
  // Before dlopen: a refused variant's static initialisers must never run.
  const auto required = loader::signature_required(options.require_signature);
  if (!required) {
    throw std::runtime_error(required.error().message);
  }
  if (*required) {
    loader::KeyOptions keys;
    keys.files = options.trusted_keys;
    keys.hub = loader::HubKeySource{context.endpoint, loader::hub_key_dir_from_environment(),
                                    context.transport};
    if (auto verified = loader::require_signed_variant(kernel->variant_path, keys); !verified) {
      throw std::runtime_error(verified.error().message);
    }
  }
  return open_variant(kernel->variant_path);
}

OpenedVariant open_variant(const fs::path& variant_path) {
  auto module = loader::resolve_kernel_module(variant_path);
  if (!module) {
    throw std::runtime_error(module.error().message);
  }
  if (!module->metadata) {
    throw std::runtime_error("kernel at \"" + module->variant_path.string() +
                             "\" has no metadata id; the C++ API needs it for the ops namespace");
  }
  // Before dlopen, as every refusal: a kernel needing a newer kernels API never runs.
  if (auto minver = loader::check_kernels_minver(*module); !minver) {
    throw std::runtime_error(minver.error().message);
  }
  if (module->dirty_build) {
    std::cerr << "kernelhub: warning: " << *module->dirty_build << "\n";
  }
  const auto& metadata = *module->metadata;

  static std::mutex mutex;
  static std::map<fs::path, void*> libraries;
  std::lock_guard lock(mutex);
  void*& library = libraries[module->variant_path];
  if (library == nullptr) {
    const fs::path file = find_library(module->entry_file.parent_path(), metadata.id);
    // RTLD_LAZY: the library's Python entry point refers to libpython symbols that a C++
    // program does not have and that are never called here.
    library = dlopen(file.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (library == nullptr) {
      throw std::runtime_error(std::string("cannot load kernel library: ") + dlerror());
    }
  }

  OpenedVariant opened;
  opened.variant_path = module->variant_path;
  opened.library = library;
  opened.metadata = {metadata.id, metadata.name.str(), metadata.version, metadata.license,
                     std::string(types::to_string(metadata.backend.type)),
                     metadata.backend.archs.value_or(std::vector<std::string>{})};
  return opened;
}

}  // namespace detail

}  // namespace kernelhub
