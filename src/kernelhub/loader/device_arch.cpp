// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/device_arch.hpp>

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace kernelhub::loader {

namespace {

std::optional<int> to_int(std::string_view text) {
  int value = 0;
  if (text.empty()) {
    return std::nullopt;
  }
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

std::optional<bool> cuda_arch_supports(const std::string& arch, CudaCapability capability) {
  std::string_view text = arch;
  const bool ptx = text.ends_with("+PTX");
  if (ptx) {
    text.remove_suffix(4);
  }
  char suffix = 0;
  if (text.ends_with('a') || text.ends_with('f')) {
    suffix = text.back();
    text.remove_suffix(1);
  }
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) {
    return std::nullopt;
  }
  const auto major = to_int(text.substr(0, dot));
  const auto minor = to_int(text.substr(dot + 1));
  if (!major || !minor) {
    return std::nullopt;
  }
  const CudaCapability built{*major, *minor};
  if (suffix == 'a') {
    // Architecture-specific code runs only on that exact capability.
    return capability == built;
  }
  if (ptx && suffix == 0) {
    // PTX is compiled for the device at load time, so any newer capability runs it.
    return capability >= built;
  }
  // SASS (and family-specific code) runs within its generation on the same or a newer minor.
  return capability.major == built.major && capability.minor >= built.minor;
}

std::optional<std::string> arch_mismatch(const metadata::Metadata& metadata,
                                         const DeviceArch& device) {
  if (!metadata.backend.archs || metadata.backend.archs->empty()) {
    return std::nullopt;
  }
  const auto& archs = *metadata.backend.archs;
  const std::string listed = fmt::format("{}", fmt::join(archs, ", "));
  if (metadata.backend.type == types::Backend::cuda && device.cuda) {
    bool understood = false;
    for (const auto& arch : archs) {
      const auto supports = cuda_arch_supports(arch, *device.cuda);
      understood = understood || supports.has_value();
      if (supports.value_or(false)) {
        return std::nullopt;
      }
    }
    if (!understood) {
      // Arch strings from a newer builder: compatibility cannot be told, so do not reject.
      return std::nullopt;
    }
    return fmt::format("CUDA capability {}.{} of this GPU is not in the build's archs: {}",
                       device.cuda->major, device.cuda->minor, listed);
  }
  if (metadata.backend.type == types::Backend::rocm && device.rocm) {
    if (std::find(archs.begin(), archs.end(), *device.rocm) != archs.end()) {
      return std::nullopt;
    }
    return fmt::format("ROCm arch {} of this GPU is not in the build's archs: {}", *device.rocm,
                       listed);
  }
  return std::nullopt;
}

}  // namespace kernelhub::loader
