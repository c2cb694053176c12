// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/variants/system.hpp>

#include <fmt/format.h>

#include <kernelhub/variants/backend_token.hpp>

namespace kernelhub::variants {

std::string SystemBackend::variant_string() const {
  // Only major and minor appear in names: ROCm 6.3.42131 is "rocm63".
  return to_string(BackendToken{kind, ReleaseVersion::from_parts(version.major(), version.minor())});
}

util::Expected<SystemBackend> select_backend(const SystemBackend& detected,
                                             std::optional<std::string_view> requested) {
  if (!requested) {
    return detected;
  }
  if (*requested == "cpu") {
    return SystemBackend{types::Backend::cpu, {}};
  }
  if (*requested == detected.name()) {
    return detected;
  }
  // The reference lists the sorted keys of {"cpu", detected}: just "cpu" on a CPU machine.
  const auto supported = detected.kind == types::Backend::cpu
                             ? std::string("cpu")
                             : (detected.name() < std::string_view("cpu")
                                    ? fmt::format("{}, cpu", detected.name())
                                    : fmt::format("cpu, {}", detected.name()));
  return util::fail(
      fmt::format("Invalid backend '{}', system supported backends: {}", *requested, supported));
}

util::Expected<void> apply_backend(SystemInfo& system, std::optional<std::string_view> requested) {
  auto selected = select_backend(system.backend, requested);
  if (!selected) {
    return util::fail(selected.error().message);
  }
  system.backend = *selected;
  if (requested) {
    system.backend_device = true;
  }
  return {};
}

}  // namespace kernelhub::variants
