// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/variants/local_variants.hpp>

#include <algorithm>

#include <fmt/format.h>

#include <kernelhub/variants/build_variants.hpp>

namespace kernelhub::variants {

namespace {

// Either the compute part of a name ("cu128") or why the backend cannot build here.
struct Compute {
  std::string token;
  std::string reason;
};

Compute fail(std::string reason) { return {{}, std::move(reason)}; }

std::string where_python(const BuildHost& host) {
  return host.python.empty() ? "no Python interpreter answered (set KERNELHUB_PYTHON)"
                             : fmt::format("torch is not installed for {}", host.python);
}

bool within_bounds(const ReleaseVersion& version, const std::optional<types::Version>& min,
                   const std::optional<types::Version>& max) {
  const auto as_types = types::Version::parse(version.to_string());
  return as_types && (!min || *min <= *as_types) && (!max || *as_types <= *max);
}

std::string bounds_text(const std::optional<types::Version>& min, const std::optional<types::Version>& max) {
  return fmt::format("{} to {}", min ? min->to_string() : "any", max ? max->to_string() : "any");
}

// The compute token for `backend`; `torch_kernel` is false for tvm-ffi kernels, which build
// without torch and only know CUDA, SYCL and CPU (the reference's tvm-ffi CMake preamble).
Compute compute_for(const config::BuildConfig& config, const BuildHost& host, types::Backend backend,
                    bool torch_kernel) {
  const auto& torch = host.torch;
  switch (backend) {
    case types::Backend::cpu:
      return {"cpu", {}};
    case types::Backend::cuda: {
      if (torch_kernel && torch && !torch->cuda) {
        return fail(fmt::format("torch {} was built without CUDA", torch->version.to_string()));
      }
      const auto& nvcc = host.toolchains.nvcc;
      if (!nvcc) {
        return fail("nvcc not found in PATH or CUDA_HOME");
      }
      const auto torch_cuda = torch_kernel && torch ? torch->cuda : std::nullopt;
      if (torch_cuda && torch_cuda->major() != nvcc->major()) {
        // As build refuses it (torch.utils.cpp_extension does too).
        return fail(fmt::format("nvcc is CUDA {} but torch was built with CUDA {}",
                                nvcc->to_string(), torch_cuda->to_string()));
      }
      const auto named = cuda_variant_release(torch_cuda, nvcc, torch_kernel);
      if (!named) {
        return fail(where_python(host));
      }
      const auto& cuda = config.general.cuda;
      // Both must be within the bounds, as build checks both.
      for (const auto& version : {torch_cuda, nvcc}) {
        if (version && cuda && !within_bounds(*version, cuda->minver, cuda->maxver)) {
          return fail(fmt::format("CUDA {} is outside general.cuda bounds ({})",
                                  version->to_string(), bounds_text(cuda->minver, cuda->maxver)));
        }
      }
      return {"cu" + named->flattened(), {}};
    }
    case types::Backend::rocm:
      if (!torch_kernel) {
        return fail("tvm-ffi kernels have no ROCm build");
      }
      if (torch && !torch->hip) {
        return fail(fmt::format("torch {} was built without ROCm", torch->version.to_string()));
      }
      if (!host.toolchains.hipcc) {
        return fail("hipcc not found in PATH");
      }
      return {"rocm" + torch->hip->flattened(), {}};
    case types::Backend::xpu:
      if (torch_kernel && torch && !torch->xpu) {
        return fail(fmt::format("torch {} was built without XPU", torch->version.to_string()));
      }
      if (!host.toolchains.icpx) {
        return fail("icpx (oneAPI DPC++) not found in PATH");
      }
      return {"xpu" + host.toolchains.icpx->flattened(), {}};
    case types::Backend::metal:
      if (!torch_kernel) {
        return fail("tvm-ffi kernels have no Metal build");
      }
      if (host.system.os != "darwin") {
        return fail(fmt::format("Metal builds need macOS, this is {}", host.system.os));
      }
      if (torch && !torch->mps) {
        return fail("torch reports MPS as unavailable");
      }
      return {"metal", {}};
    case types::Backend::tpu:
      if (torch_kernel && torch && torch->tpu) {
        return {"tpu", {}};
      }
      return fail("torch_tpu is not installed");
    default:
      return fail(fmt::format("kernel-builder has no {} build", types::to_string(backend)));
  }
}

LocalVariant local_variant(const config::BuildConfig& config, const BuildHost& host,
                           types::Backend backend, const std::string& system) {
  LocalVariant variant{backend, {}, {}};
  const bool has_kernel = std::any_of(config.kernels.begin(), config.kernels.end(),
                                      [&](const config::Kernel& k) { return k.backend == backend; });
  const bool tvm_ffi = std::holds_alternative<config::TvmFfi>(config.framework);
  // Noarch builds only copy Python files: nothing to compile, nothing to check.
  if (!tvm_ffi && !has_kernel) {
    variant.name = fmt::format("torch-{}", types::to_string(backend));
    return variant;
  }
  if (tvm_ffi) {
    if (!host.system.tvm_ffi_version) {
      variant.reason = "tvm-ffi is not installed in the active Python";
      return variant;
    }
  } else if (!host.torch) {
    variant.reason = where_python(host);
    return variant;
  }
  const auto compute = compute_for(config, host, backend, !tvm_ffi);
  if (!compute.reason.empty()) {
    variant.reason = compute.reason;
    return variant;
  }
  if (tvm_ffi) {
    variant.name = fmt::format("tvm-ffi{}-{}-{}", host.system.tvm_ffi_version->flattened(), compute.token, system);
    return variant;
  }
  const auto& torch_version = host.torch->version;
  const auto& torch = std::get<config::Torch>(config.framework);
  if (!within_bounds(torch_version, torch.minver, torch.maxver)) {
    variant.reason = fmt::format("torch {} is outside the kernel's torch bounds ({})",
                                 torch_version.to_string(), bounds_text(torch.minver, torch.maxver));
    return variant;
  }
  if (const auto abi = stable_abi_for(config, backend)) {
    const auto abi_version = ReleaseVersion::parse(abi->to_string()).value();
    if (torch_version < abi_version) {
      variant.reason = fmt::format("torch {} is older than the stable ABI {} the kernel targets",
                                   torch_version.to_string(), abi->to_string());
      return variant;
    }
    variant.name = fmt::format("torch-stable-abi{}-{}-{}", abi->flattened(), compute.token, system);
    return variant;
  }
  // Only Linux names keep the legacy C++ ABI tag.
  const bool is_linux = system.ends_with("-linux");
  variant.name = fmt::format("torch{}{}-{}-{}", torch_version.flattened(), is_linux ? "-cxx11" : "",
                             compute.token, system);
  return variant;
}

}  // namespace

std::optional<std::string> local_system_string(const SystemInfo& system) {
  std::string cpu;
  if (system.cpu == "x86_64" || system.cpu == "amd64" || system.cpu == "AMD64") {
    cpu = "x86_64";
  } else if (system.cpu == "aarch64" || system.cpu == "arm64" || system.cpu == "ARM64") {
    cpu = "aarch64";
  } else {
    return std::nullopt;
  }
  return fmt::format("{}-{}", cpu, system.os);
}

std::vector<LocalVariant> local_variants(const config::BuildConfig& config, const BuildHost& host) {
  std::vector<LocalVariant> result;
  const auto system = local_system_string(host.system);
  for (const auto backend : config.general.backends) {
    if (!system) {
      result.push_back({backend, {}, fmt::format("unsupported CPU \"{}\"", host.system.cpu)});
      continue;
    }
    result.push_back(local_variant(config, host, backend, *system));
  }
  return result;
}

std::optional<ReleaseVersion> cuda_variant_release(const std::optional<ReleaseVersion>& torch_cuda,
                                                   const std::optional<ReleaseVersion>& nvcc,
                                                   bool torch_kernel) {
  return torch_kernel ? torch_cuda : nvcc;
}

}  // namespace kernelhub::variants
