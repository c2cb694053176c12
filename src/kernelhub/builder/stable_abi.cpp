// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/stable_abi.hpp>

#include <fmt/format.h>

#include <kernelhub/builder/build_plan.hpp>
#include <kernelhub/builder/torch_versions.hpp>
#include <kernelhub/variants/variant_name.hpp>

namespace kernelhub::builder {

std::string stable_abi_variant_name(const types::Version& abi, const TorchEnvironment& torch,
                                    types::Backend backend) {
  // The arch name already spells the compute part (cpu, cu132, ...) and the system; only the
  // framework part differs.
  auto variant = variants::parse_variant(torch_arch_variant_name(torch, backend));
  if (!variant) {
    return torch_arch_variant_name(torch, backend);  // unreachable: the builder wrote the name
  }
  variant->framework = variants::Framework::torch_stable_abi;
  variant->framework_version = variants::ReleaseVersion::from_parts(
      std::to_string(abi.major()), std::to_string(abi.minor()));
  variant->abi_tag = variants::AbiTag::none;
  return variants::to_string(*variant);
}

std::optional<std::string> stable_abi_refusal(const variants::ReleaseVersion& torch,
                                              const types::Version& abi) {
  if (torch_release(torch) >= types::Version({abi.major(), abi.minor()})) {
    return std::nullopt;
  }
  return fmt::format("torch {} is older than the stable ABI version \"{}\" it would target; "
                     "build with torch {} or newer (--torch {})",
                     torch.to_string(), abi.to_string(), abi.to_string(), abi.to_string());
}

}  // namespace kernelhub::builder
