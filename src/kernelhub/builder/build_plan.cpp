// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/build_plan.hpp>

#include <algorithm>

#include <fmt/format.h>

#include <kernelhub/builder/stable_abi.hpp>
#include <kernelhub/builder/torch_versions.hpp>
#include <kernelhub/builder/tvm_ffi.hpp>
#include <kernelhub/variants/local_variants.hpp>
#include <kernelhub/variants/variant_name.hpp>

namespace kernelhub::builder {

namespace {

// Why an arch backend other than cpu is not built by this kernel-builder on this machine.
std::string arch_skip_reason(types::Backend backend, const HostTools& host) {
  switch (backend) {
    case types::Backend::rocm:
      if (!host.hipcc) {
        return "hipcc was not found in PATH; install ROCm to build rocm kernels";
      }
      return "rocm builds are not implemented by kernel-builder build yet";
    case types::Backend::xpu:
      if (!host.icpx) {
        return "icpx was not found in PATH; install the oneAPI DPC++ compiler to build xpu "
               "kernels";
      }
      return "xpu builds are not implemented by kernel-builder build yet";
    case types::Backend::metal:
      if (host.os != "darwin") {
        return fmt::format("metal kernels build only on macOS, this machine runs {}", host.os);
      }
      return "metal builds are not implemented by kernel-builder build yet";
    default:
      return fmt::format("{} builds are not implemented by kernel-builder build yet",
                         types::to_string(backend));
  }
}

void plan_cuda_variant(const config::BuildConfig& config, const HostTools& host,
                       BuildPlan& plan) {
  if (auto reason = cuda_skip_reason(config, host.torch, host.cuda_toolkit)) {
    plan.skipped.push_back({types::Backend::cuda, std::move(*reason)});
    return;
  }
  if (auto refusal = torch_refusal(config, *host.torch, types::Backend::cuda)) {
    plan.skipped.push_back({types::Backend::cuda, std::move(*refusal)});
    return;
  }
  auto cuda = plan_cuda_build(config, *host.torch, *host.cuda_toolkit);
  if (!cuda) {
    plan.skipped.push_back({types::Backend::cuda, std::move(cuda.error().message), true});
    return;
  }
  auto variant = torch_variant(config, *host.torch, types::Backend::cuda);
  variant.cuda = std::move(*cuda);
  plan.variants.push_back(std::move(variant));
}

}  // namespace

std::string torch_arch_variant_name(const TorchEnvironment& torch, types::Backend backend) {
  variants::Variant variant;
  variant.framework = variants::Framework::torch;
  variant.framework_version = torch.torch_version;
  variant.abi_tag = torch.os == "linux" ? variants::AbiTag::cxx11 : variants::AbiTag::none;
  variant.backend.kind = backend;
  if (backend == types::Backend::cuda && torch.cuda) {
    // The rule list-variants uses too: cu132, the CUDA torch was built with.
    auto parsed = variants::ReleaseVersion::parse(*torch.cuda);
    const auto torch_cuda =
        parsed ? std::optional(std::move(*parsed)) : std::optional<variants::ReleaseVersion>();
    if (auto cuda = variants::cuda_variant_release(torch_cuda, std::nullopt, true)) {
      variant.backend.version = *cuda;
    }
  }
  variant.cpu = torch.cpu;
  variant.os = torch.os;
  return variants::to_string(variant);
}

std::optional<std::string> torch_refusal(const config::BuildConfig& config,
                                         const TorchEnvironment& torch, types::Backend backend) {
  if (auto refusal = torch_bounds_refusal(std::get<config::Torch>(config.framework),
                                          torch.torch_version)) {
    return refusal;
  }
  if (const auto abi = config.stable_abi_for(backend)) {
    return stable_abi_refusal(torch.torch_version, *abi);
  }
  return std::nullopt;
}

PlannedVariant torch_variant(const config::BuildConfig& config, const TorchEnvironment& torch,
                             types::Backend backend) {
  if (const auto abi = config.stable_abi_for(backend)) {
    return {backend, VariantKind::arch, stable_abi_variant_name(*abi, torch, backend), abi};
  }
  return {backend, VariantKind::arch, torch_arch_variant_name(torch, backend), std::nullopt};
}

BuildPlan plan_build(const config::BuildConfig& config, const HostTools& host) {
  BuildPlan plan;
  const bool is_torch = std::holds_alternative<config::Torch>(config.framework);
  const auto with_kernels = config.backends_with_kernels();
  for (const auto backend : config.general.backends) {
    const bool has_kernels =
        std::find(with_kernels.begin(), with_kernels.end(), backend) != with_kernels.end();
    if (config.is_noarch() || (is_torch && !has_kernels)) {
      PlannedVariant noarch;
      noarch.backend = backend;
      noarch.kind = VariantKind::noarch;
      noarch.name = fmt::format("torch-{}", types::to_string(backend));
      plan.variants.push_back(std::move(noarch));
    } else if (!is_torch) {
      plan_tvm_ffi_backend(config, backend, host, plan);
    } else if (backend == types::Backend::cuda) {
      plan_cuda_variant(config, host, plan);
    } else if (backend != types::Backend::cpu) {
      plan.skipped.push_back({backend, arch_skip_reason(backend, host)});
    } else if (!host.torch) {
      plan.skipped.push_back({backend, "no Python with torch was found; pass --python"});
    } else if (auto refusal = torch_refusal(config, *host.torch, backend)) {
      plan.skipped.push_back({backend, std::move(*refusal)});
    } else {
      plan.variants.push_back(torch_variant(config, *host.torch, backend));
    }
  }
  return plan;
}

}  // namespace kernelhub::builder
