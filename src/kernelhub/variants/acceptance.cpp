// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/variants/acceptance.hpp>

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace kernelhub::variants {

namespace {

// Metal kernels are built with -std=metal4.0, which needs macOS 26 (reference comment).
const ReleaseVersion k_metal_min_macos = ReleaseVersion::from_parts("26", "0");

// Python's str() of the optional values the reference formats into its messages.
std::string py_str(const std::optional<ReleaseVersion>& version) {
  return version ? version->to_string() : "None";
}
std::string py_str(std::optional<bool> value) {
  return value ? (*value ? "True" : "False") : "None";
}

std::optional<bool> cxx11_of(AbiTag tag) {
  switch (tag) {
    case AbiTag::cxx11:
      return true;
    case AbiTag::cxx98:
      return false;
    case AbiTag::none:
      break;
  }
  return std::nullopt;
}

std::optional<std::string> check_framework(const SystemInfo& system, const Variant& v) {
  const auto& version = v.framework_version;
  switch (v.framework) {
    case Framework::torch:
      if (!system.torch_version || version != *system.torch_version) {
        return fmt::format("Torch version ({}) does not match environment Torch version ({})",
                           version.to_string(), py_str(system.torch_version));
      }
      if (v.abi_tag != AbiTag::none && cxx11_of(v.abi_tag) != system.cxx11_abi) {
        return fmt::format(
            "Torch CXX11 ABI ({}) does not match environment Torch CXX11 ABI ({})",
            py_str(cxx11_of(v.abi_tag)), py_str(system.cxx11_abi));
      }
      return std::nullopt;
    case Framework::torch_stable_abi:
      if (!system.torch_version || version > *system.torch_version) {
        return fmt::format(
            "Torch stable ABI version ({}) is too new for environment Torch version ({})",
            version.to_string(), py_str(system.torch_version));
      }
      return std::nullopt;
    case Framework::tvm_ffi:
      if (!system.tvm_ffi_version || version != *system.tvm_ffi_version) {
        return fmt::format("tvm-ffi version ({}) does not match environment tvm-ffi version ({})",
                           version.to_string(), py_str(system.tvm_ffi_version));
      }
      return std::nullopt;
    case Framework::torch_noarch:
      break;
  }
  return std::nullopt;
}

std::optional<std::string> check_backend(const SystemInfo& system, const Variant& v) {
  const auto& selected = system.backend;
  if (selected.kind == types::Backend::cuda && v.backend.kind == types::Backend::cuda) {
    // CUDA x.y runs kernels built for x.z with z <= y (minor-version compatibility).
    if (compare_digits(v.backend.version.major(), selected.version.major()) != 0 ||
        compare_digits(v.backend.version.minor(), selected.version.minor()) > 0) {
      return fmt::format("CUDA version ({}) is not compatible with system CUDA version ({})",
                         v.backend.version.to_string(), selected.version.to_string());
    }
    return std::nullopt;
  }
  if (to_string(v.backend) != selected.variant_string()) {
    return fmt::format("backend ({}) does not match selected backend ({})", to_string(v.backend),
                       selected.variant_string());
  }
  if (v.backend.kind == types::Backend::metal &&
      (!system.macos_version || *system.macos_version < k_metal_min_macos)) {
    return fmt::format("Metal kernels require macOS {} or later, system macOS version is {}",
                       k_metal_min_macos.to_string(), py_str(system.macos_version));
  }
  return std::nullopt;
}

std::optional<std::string> check_arch(const SystemInfo& system, const Variant& v) {
  if (v.cpu != system.cpu) {
    return fmt::format("CPU ({}) does not match system CPU ({})", v.cpu, system.cpu);
  }
  if (v.os != system.os) {
    return fmt::format("OS ({}) does not match system OS ({})", v.os, system.os);
  }
  if (auto reason = check_framework(system, v)) {
    return reason;
  }
  return check_backend(system, v);
}

std::optional<std::string> check_noarch(const SystemInfo& system, const Variant& v) {
  // Ascend kernels are published as torch-npu, while the backend is called cann.
  const std::string_view wanted =
      system.backend.kind == types::Backend::cann ? "npu" : system.backend.name();
  if (v.noarch_backend != wanted && !v.is_universal()) {
    return fmt::format("backend ({}) does not match system backend ({}) and is not universal",
                       v.noarch_backend, wanted);
  }
  return std::nullopt;
}

// One element of the reference's integer sort tuple; the numbers come from variant names
// and may be arbitrarily long, so they stay digit strings with a sign.
struct SortNumber {
  bool negative = false;
  std::string_view magnitude = "0";
};

std::strong_ordering compare(const SortNumber& a, const SortNumber& b) {
  const bool a_neg = a.negative && a.magnitude != "0";
  const bool b_neg = b.negative && b.magnitude != "0";
  if (a_neg != b_neg) {
    return a_neg ? std::strong_ordering::less : std::strong_ordering::greater;
  }
  const auto order = compare_digits(a.magnitude, b.magnitude);
  return a_neg ? 0 <=> order : order;
}

using SortKey = std::array<SortNumber, 5>;

SortKey sort_key(const Decision& decision) {
  const auto& v = decision.variant;
  const SortNumber accepted{false, decision.accepted() ? "0" : "1"};
  if (!v.is_arch()) {
    // Backend-specific noarch before the legacy torch-universal.
    return {accepted, {false, "2"}, {}, {}, {false, v.is_universal() ? "1" : "0"}};
  }
  // Higher backend minor first; the major is not part of the key.
  const SortNumber backend = is_versioned(v.backend.kind)
                                 ? SortNumber{true, v.backend.version.minor()}
                                 : SortNumber{};
  switch (v.framework) {
    case Framework::torch_stable_abi:
      return {accepted, {false, "0"}, {true, v.framework_version.major()},
              {true, v.framework_version.minor()}, backend};
    case Framework::torch:
      // A name without the ABI tag beats -cxx11/-cxx98.
      return {accepted, {false, "1"}, {}, {false, v.abi_tag == AbiTag::none ? "0" : "1"}, backend};
    default:
      return {accepted, {false, "2"}, {}, {}, backend};
  }
}

bool key_less(const SortKey& a, const SortKey& b) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto order = compare(a[i], b[i]);
    if (order != std::strong_ordering::equal) {
      return order == std::strong_ordering::less;
    }
  }
  return false;
}

}  // namespace

const Variant* Resolution::best() const {
  return !trace.empty() && trace.front().accepted() ? &trace.front().variant : nullptr;
}

std::vector<Decision> check_variants(const SystemInfo& system, std::span<const Variant> variants) {
  std::vector<Decision> decisions;
  for (const auto& variant : variants) {
    if (variant.is_arch() && system.free_threaded) {
      continue;
    }
    decisions.push_back(Decision{
        variant, variant.is_arch() ? check_arch(system, variant) : check_noarch(system, variant)});
  }
  return decisions;
}

std::vector<Decision> sort_decisions(std::vector<Decision> decisions) {
  // Keys hold views into the decisions' variants, so sort indices, then move.
  std::vector<std::pair<SortKey, std::size_t>> keyed;
  keyed.reserve(decisions.size());
  for (std::size_t i = 0; i < decisions.size(); ++i) {
    keyed.emplace_back(sort_key(decisions[i]), i);
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return key_less(a.first, b.first); });
  std::vector<Decision> sorted;
  sorted.reserve(decisions.size());
  for (const auto& [key, index] : keyed) {
    sorted.push_back(std::move(decisions[index]));
  }
  return sorted;
}

namespace {

Resolution resolve_for(const SystemInfo& system, std::span<const Variant> variants) {
  Resolution resolution;
  if (system.free_threaded) {
    resolution.warning = std::string(k_free_threaded_warning);
  }
  resolution.trace = sort_decisions(check_variants(system, variants));
  return resolution;
}

}  // namespace

Resolution resolve_variants(const SystemInfo& system, std::span<const Variant> variants) {
  // The selected backend has no device here (a CUDA build of torch without a GPU): a cpu
  // variant runs, a GPU one would only import. The selected backend's variants otherwise.
  if (!system.backend_device && system.backend.kind != types::Backend::cpu) {
    auto on_cpu = system;
    on_cpu.backend = SystemBackend{types::Backend::cpu, {}};
    auto resolution = resolve_for(on_cpu, variants);
    if (resolution.best() != nullptr) {
      return resolution;
    }
  }
  return resolve_for(system, variants);
}

Resolution resolve_variant_names(const SystemInfo& system, std::span<const std::string> names) {
  std::vector<Variant> variants;
  std::vector<std::string> skipped;
  for (const auto& name : names) {
    auto parsed = parse_variant(name);
    if (parsed) {
      variants.push_back(std::move(*parsed));
    } else {
      skipped.push_back(name);
    }
  }
  auto resolution = resolve_variants(system, variants);
  resolution.skipped = std::move(skipped);
  return resolution;
}

std::string render_trace(std::span<const Decision> decisions) {
  const auto sorted = sort_decisions({decisions.begin(), decisions.end()});
  const Variant* best = !sorted.empty() && sorted.front().accepted() ? &sorted.front().variant : nullptr;
  std::string text;
  for (const auto& decision : decisions) {
    if (&decision != decisions.data()) {
      text += '\n';
    }
    const auto name = to_string(decision.variant);
    if (decision.accepted()) {
      const bool preferred = best != nullptr && decision.variant == *best;
      text += fmt::format("{} {} ✅", name, preferred ? "compatible, preferred" : "compatible");
    } else {
      text += fmt::format("{}: {}", name, *decision.rejection);
    }
  }
  return text;
}

}  // namespace kernelhub::variants
