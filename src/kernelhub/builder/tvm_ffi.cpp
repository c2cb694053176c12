// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/tvm_ffi.hpp>

#include <fmt/format.h>

#include <kernelhub/builder/cuda_plan.hpp>
#include <kernelhub/variants/variant_name.hpp>

namespace kernelhub::builder {

namespace {

// The first bound of general.cuda that nvcc's version breaks. Unlike [torch] kernels there
// is no torch CUDA to agree with: nvcc alone decides.
std::optional<std::string> cuda_bound_violation(const config::BuildConfig& config,
                                                const types::Version& nvcc) {
  const auto& table = config.general.cuda;
  if (!table) {
    return std::nullopt;
  }
  if (table->minver && nvcc < *table->minver) {
    return fmt::format("nvcc is CUDA {}, older than general.cuda.minver \"{}\"",
                       cuda_version_string(nvcc), table->minver->to_string());
  }
  if (table->maxver && nvcc > *table->maxver) {
    return fmt::format("nvcc is CUDA {}, newer than general.cuda.maxver \"{}\"",
                       cuda_version_string(nvcc), table->maxver->to_string());
  }
  return std::nullopt;
}

}  // namespace

std::string tvm_ffi_variant_name(const TvmFfiEnvironment& tvm_ffi, types::Backend backend,
                                 const std::optional<types::Version>& cuda) {
  variants::Variant variant;
  variant.framework = variants::Framework::tvm_ffi;
  variant.framework_version = tvm_ffi.version;
  variant.backend.kind = backend;
  if (cuda) {
    variant.backend.version = variants::ReleaseVersion::from_parts(
        std::to_string(cuda->major()), std::to_string(cuda->minor()));
  }
  variant.cpu = tvm_ffi.cpu;
  variant.os = tvm_ffi.os;
  return variants::to_string(variant);
}

std::optional<std::string> tvm_ffi_skip_reason(const config::BuildConfig& config,
                                               types::Backend backend, const HostTools& host) {
  switch (backend) {
    case types::Backend::cpu:
    case types::Backend::cuda:
    case types::Backend::xpu:
      break;
    default:
      return fmt::format("tvm-ffi kernels build only for cpu, cuda and xpu (the reference's "
                         "tvm-ffi CMake preamble has no {} path)",
                         types::to_string(backend));
  }
  if (!host.tvm_ffi) {
    return "the build's Python cannot import tvm_ffi; install apache-tvm-ffi there (`pip install "
           "apache-tvm-ffi`) or pass --python";
  }
  if (backend == types::Backend::xpu) {
    if (!host.icpx) {
      return "icpx was not found in PATH; install the oneAPI DPC++ compiler to build xpu "
             "kernels";
    }
    return "xpu builds are not implemented by kernel-builder build yet";
  }
  if (backend == types::Backend::cuda) {
    if (!host.cuda_toolkit) {
      return "nvcc was not found in PATH, $CUDA_HOME/bin or /usr/local/cuda/bin; install the "
             "CUDA toolkit (or set CUDA_HOME to it) to build cuda kernels";
    }
    return cuda_bound_violation(config, host.cuda_toolkit->version);
  }
  return std::nullopt;
}

void plan_tvm_ffi_backend(const config::BuildConfig& config, types::Backend backend,
                          const HostTools& host, BuildPlan& plan) {
  if (auto reason = tvm_ffi_skip_reason(config, backend, host)) {
    plan.skipped.push_back({backend, std::move(*reason)});
    return;
  }
  PlannedVariant variant;
  variant.backend = backend;
  variant.kind = VariantKind::arch;
  if (backend != types::Backend::cuda) {
    variant.name = tvm_ffi_variant_name(*host.tvm_ffi, backend);
    plan.variants.push_back(std::move(variant));
    return;
  }
  // The archs and nvcc flags of each cuda kernel, as for [torch] kernels; with no torch there
  // is no CUDA version to compare nvcc with.
  auto cuda = plan_cuda_build(config, TorchEnvironment{}, *host.cuda_toolkit);
  if (!cuda) {
    plan.skipped.push_back({backend, std::move(cuda.error().message), true});
    return;
  }
  variant.name = tvm_ffi_variant_name(*host.tvm_ffi, backend, cuda->toolkit_version);
  variant.cuda = std::move(*cuda);
  plan.variants.push_back(std::move(variant));
}

}  // namespace kernelhub::builder
