// SPDX-License-Identifier: Apache-2.0
#include <array>

#include <fmt/format.h>

#include <kernelhub/abi/cxx_symbol.hpp>
#include <kernelhub/abi/rules.hpp>

namespace kernelhub::abi {

namespace {

constexpr std::array<std::string_view, 3> k_torch_namespaces = {"c10", "at", "torch"};

bool in_torch_namespace(std::string_view name) {
  for (auto ns : k_torch_namespaces) {
    if (name == ns) {
      return true;
    }
  }
  return false;
}

// True for a C++ symbol of libtorch's unstable API. The mangled scope is the main test; the
// demangled prefix test is the reference's, kept so that we flag at least what it flags.
bool is_unstable_torch_symbol(std::string_view symbol, std::string_view demangled) {
  auto scope = mangled_scope(symbol);
  if (!scope.empty() && in_torch_namespace(scope[0])) {
    return !(scope[0] == "torch" && scope.size() > 1 && scope[1] == "stable");
  }
  if (demangled.starts_with("torch::stable::")) {
    return false;
  }
  for (auto ns : k_torch_namespaces) {
    if (demangled.starts_with(fmt::format("{}::", ns))) {
      return true;
    }
  }
  return false;
}

}  // namespace

void check_torch_stable_abi(const std::vector<std::string>& undefined, const VersionTable& shims,
                            const types::Version& target, std::string_view library,
                            ViolationSink& sink) {
  for (const auto& name : undefined) {
    if (const auto* added = shims.find(name)) {
      if (*added > target) {
        sink.report(Violation{
            std::string(library), Rule::torch_stable_abi, name, {}, version_text(*added),
            fmt::format("shim function \"{}\" is in the torch stable ABI only since {}, newer "
                        "than the target {}",
                        name, version_text(*added), version_text(target)),
            fmt::format("raise --torch-stable-abi to {} or build with TORCH_TARGET_VERSION set to "
                        "the target",
                        version_text(*added))});
      }
      continue;
    }
    auto demangled = demangle(name);
    if (demangled.empty() || !is_unstable_torch_symbol(name, demangled)) {
      continue;
    }
    sink.report(Violation{
        std::string(library), Rule::torch_stable_abi, name, demangled, {},
        fmt::format("symbol \"{}\" is not part of the torch stable ABI", demangled),
        "use the torch::stable API and the C shim (torch/csrc/stable/) instead of libtorch's "
        "C++ API"});
  }
}

}  // namespace kernelhub::abi
