// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/cuda_plan.hpp>

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kernelhub::builder {

namespace {

// The first bound of general.cuda that `version` (of `what`) breaks, as a skip reason.
std::optional<std::string> bound_violation(const config::BuildConfig& config,
                                           const types::Version& version, std::string_view what) {
  const auto& table = config.general.cuda;
  if (!table) {
    return std::nullopt;
  }
  if (table->minver && version < *table->minver) {
    return fmt::format("{} is CUDA {}, older than general.cuda.minver \"{}\"", what,
                       cuda_version_string(version), table->minver->to_string());
  }
  if (table->maxver && version > *table->maxver) {
    return fmt::format("{} is CUDA {}, newer than general.cuda.maxver \"{}\"", what,
                       cuda_version_string(version), table->maxver->to_string());
  }
  return std::nullopt;
}

std::string join(const std::vector<CudaArch>& archs) {
  return fmt::format("{}", fmt::join(to_strings(archs), ", "));
}

// The kernel's own nvcc flags; -static-global-template-stub needs CUDA 12.8 (as the
// reference, which strips it for older toolkits).
std::vector<std::string> kernel_cuda_flags(const config::Kernel& kernel,
                                           const types::Version& toolkit) {
  auto flags = kernel.cuda_flags.value_or(std::vector<std::string>{});
  if (toolkit < types::Version({12, 8})) {
    std::erase_if(flags, [](const std::string& flag) {
      return flag.starts_with("-static-global-template-stub=");
    });
  }
  return flags;
}

util::Expected<CudaKernelTarget> plan_kernel(const config::Kernel& kernel,
                                             const std::vector<CudaArch>& defaults,
                                             const CudaToolkit& toolkit,
                                             std::vector<std::string>& warnings) {
  std::vector<CudaArch> targets;  // the reference intersects with the defaults minus +PTX
  for (auto arch : defaults) {
    arch.ptx = false;
    targets.push_back(arch);
  }
  std::vector<CudaArch> archs = defaults;
  if (kernel.cuda_capabilities) {
    const auto requested = KH_TRY(parse_cuda_archs(*kernel.cuda_capabilities).map_error(
        [&](util::Error error) {
          return util::Error{fmt::format("kernel.{}.cuda-capabilities: {}", kernel.name,
                                         error.message)};
        }));
    archs = loose_intersection(requested, targets);
    if (archs.empty()) {
      return util::fail(fmt::format(
          "cuda kernel \"{}\": empty set of capabilities after intersection (kernel: {}, "
          "supported: {})",
          kernel.name, join(requested), join(targets)));
    }
  }
  // An nvcc that cannot list its archs is trusted with the defaults of its version.
  if (!toolkit.supported.empty()) {
    std::vector<CudaArch> dropped;
    archs = supported_by_nvcc(archs, toolkit.supported, dropped);
    if (!dropped.empty()) {
      warnings.push_back(fmt::format(
          "cuda kernel \"{}\": nvcc (CUDA {}) cannot compile for {}; left out (see `nvcc "
          "--list-gpu-arch`)",
          kernel.name, cuda_version_string(toolkit.version), join(dropped)));
    }
    if (archs.empty()) {
      return util::fail(fmt::format(
          "cuda kernel \"{}\": nvcc (CUDA {}) supports none of its capabilities ({})",
          kernel.name, cuda_version_string(toolkit.version), join(dropped)));
    }
  }
  CudaKernelTarget target{kernel.name, archs, gencode_flags(archs)};
  const auto flags = kernel_cuda_flags(kernel, toolkit.version);
  target.nvcc_flags.insert(target.nvcc_flags.end(), flags.begin(), flags.end());
  return target;
}

}  // namespace

std::string cuda_version_string(const types::Version& version) {
  return fmt::format("{}.{}", version.major(), version.minor());
}

std::optional<std::string> cuda_skip_reason(const config::BuildConfig& config,
                                            const std::optional<TorchEnvironment>& torch,
                                            const std::optional<CudaToolkit>& toolkit) {
  if (!toolkit) {
    return "nvcc was not found in PATH, $CUDA_HOME/bin or /usr/local/cuda/bin; install the CUDA "
           "toolkit (or set CUDA_HOME to it) to build cuda kernels";
  }
  if (!torch) {
    return "no Python with torch was found; pass --python";
  }
  if (!torch->cuda) {
    return fmt::format(
        "the torch of the build's Python is not a CUDA build (torch.version.cuda is None); "
        "install one matching nvcc, e.g. `pip install torch --index-url "
        "https://download.pytorch.org/whl/cu{}`",
        toolkit->version.flattened());
  }
  const auto torch_cuda = types::Version::parse(*torch->cuda);
  if (!torch_cuda) {
    return fmt::format("cannot read torch.version.cuda \"{}\"", *torch->cuda);
  }
  if (torch_cuda->major() != toolkit->version.major()) {
    return fmt::format(
        "nvcc is CUDA {} but torch was built with CUDA {}; install a CUDA {} toolkit (or set "
        "CUDA_HOME to one) or a torch built for CUDA {} (torch.utils.cpp_extension refuses "
        "a different major version too)",
        cuda_version_string(toolkit->version), cuda_version_string(*torch_cuda),
        torch_cuda->major(), toolkit->version.major());
  }
  if (auto reason = bound_violation(config, *torch_cuda, "torch")) {
    return reason;
  }
  return bound_violation(config, toolkit->version, "nvcc");
}

util::Expected<CudaBuild> plan_cuda_build(const config::BuildConfig& config,
                                          const TorchEnvironment& torch,
                                          const CudaToolkit& toolkit) {
  CudaBuild build;
  build.nvcc = toolkit.nvcc;
  build.toolkit_version = toolkit.version;
  if (torch.cuda) {
    const auto torch_cuda = types::Version::parse(*torch.cuda);
    // major.minor only: "13.0" parses to 13 while nvcc may report 13.0.
    if (torch_cuda && (torch_cuda->major() != toolkit.version.major() ||
                       torch_cuda->minor() != toolkit.version.minor())) {
      build.warnings.push_back(fmt::format(
          "nvcc is CUDA {} but torch was built with CUDA {}; building anyway, as "
          "torch.utils.cpp_extension does when only the minor version differs",
          cuda_version_string(toolkit.version), cuda_version_string(*torch_cuda)));
    }
  }
  const auto defaults = KH_TRY(default_cuda_archs(toolkit.version));
  std::vector<std::string> all_archs;
  for (const auto& kernel : config.kernels) {
    if (kernel.backend != types::Backend::cuda) {
      continue;
    }
    if (kernel.cuda_minver && toolkit.version < *kernel.cuda_minver) {
      // The reference drops the component silently; we say so.
      build.warnings.push_back(fmt::format(
          "cuda kernel \"{}\" needs CUDA {} (cuda-minver) and nvcc is CUDA {}; left out of the "
          "cuda variant",
          kernel.name, kernel.cuda_minver->to_string(), cuda_version_string(toolkit.version)));
      continue;
    }
    auto target = KH_TRY(plan_kernel(kernel, defaults, toolkit, build.warnings));
    const auto names = to_strings(target.archs);
    all_archs.insert(all_archs.end(), names.begin(), names.end());
    build.kernels.push_back(std::move(target));
  }
  build.archs = sorted_arch_names(std::move(all_archs));
  return build;
}

}  // namespace kernelhub::builder
