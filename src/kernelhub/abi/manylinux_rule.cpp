// SPDX-License-Identifier: Apache-2.0
#include <optional>
#include <set>

#include <fmt/format.h>

#include <kernelhub/abi/rules.hpp>

namespace kernelhub::abi {

namespace {

// "GLIBC_2.34" -> {"GLIBC", "2.34"}; "CXXABI_TM_1" -> {"CXXABI", "TM_1"}, as auditwheel splits.
std::pair<std::string_view, std::string_view> split_version(std::string_view version) {
  auto underscore = version.find('_');
  if (underscore == std::string_view::npos) {
    return {version, {}};
  }
  return {version.substr(0, underscore), version.substr(underscore + 1)};
}

std::string policy_label(const ResolvedPolicy& policy) {
  if (policy.name == policy.manylinux->name) {
    return policy.name;
  }
  return fmt::format("{} ({})", policy.name, policy.manylinux->name);
}

// "manylinux_2_28 allows GLIBC up to 2.28", from the highest numeric token in the set.
std::string hint_for(const ResolvedPolicy& policy, std::string_view prefix, std::string_view token,
                     const StringSet& allowed) {
  std::optional<types::Version> highest;
  std::string highest_text;
  for (const auto& candidate : allowed) {
    auto parsed = types::Version::parse(candidate);
    if (parsed && (!highest || *parsed > *highest)) {
      highest = *parsed;
      highest_text = candidate;
    }
  }
  std::string hint = highest ? fmt::format("{} allows {} up to {}", policy_label(policy), prefix,
                                            highest_text)
                             : fmt::format("{} allows no {} version", policy_label(policy), prefix);
  if (!types::Version::parse(token)) {
    return hint + fmt::format("; \"{}\" is not a release version", token);
  }
  if (prefix == "GLIBC") {
    hint += "; build against an older glibc, or bind the symbol to an older version with .symver";
  } else if (prefix == "GLIBCXX" || prefix == "CXXABI") {
    hint += "; the symbol comes from a newer libstdc++ than the policy's toolchain";
  }
  return hint;
}

}  // namespace

void check_manylinux(const ElfFile& elf, const ResolvedPolicy& policy, std::string_view library,
                     ViolationSink& sink) {
  const auto& manylinux = *policy.manylinux;
  if (manylinux.symbol_versions.empty()) {
    return;  // "linux": no symbol-version constraint at all
  }
  auto arch = elf_architecture(elf);
  auto by_arch = manylinux.symbol_versions.find(arch);
  if (by_arch == manylinux.symbol_versions.end()) {
    auto name = arch.empty() ? fmt::format("e_machine {}", elf.machine) : std::string(arch);
    sink.report(Violation{std::string(library), Rule::manylinux, {}, {}, {},
                          fmt::format("architecture \"{}\" is not covered by {}", name,
                                      policy_label(policy)),
                          {}});
    return;
  }
  const auto& prefixes = by_arch->second;
  // nullptr when the version is allowed or its prefix is not one the policy constrains.
  auto disallowed = [&](std::string_view version) -> const StringSet* {
    auto [prefix, token] = split_version(version);
    auto allowed = prefixes.find(prefix);
    if (allowed == prefixes.end() || allowed->second.contains(token)) {
      return nullptr;
    }
    return &allowed->second;
  };

  std::set<std::string, std::less<>> reported;
  for (const auto& symbol : elf.undefined_symbols) {
    if (symbol.version.empty()) {
      continue;
    }
    const auto* allowed = disallowed(symbol.version);
    if (allowed == nullptr) {
      continue;
    }
    auto [prefix, token] = split_version(symbol.version);
    reported.insert(symbol.version);
    sink.report(Violation{
        std::string(library), Rule::manylinux, symbol.name, {}, symbol.version,
        fmt::format("symbol \"{}\" needs version \"{}\", which {} does not allow", symbol.name,
                    symbol.version, policy_label(policy)),
        hint_for(policy, prefix, token, *allowed)});
  }
  // The loader checks every version need, even one no symbol uses (GLIBC_ABI_DT_RELR).
  for (const auto& need : elf.version_needs) {
    const auto* allowed = disallowed(need.version);
    if (allowed == nullptr || reported.contains(need.version)) {
      continue;
    }
    auto [prefix, token] = split_version(need.version);
    sink.report(Violation{
        std::string(library), Rule::manylinux, {}, {}, need.version,
        fmt::format("requires version \"{}\" of \"{}\", which {} does not allow", need.version,
                    need.file, policy_label(policy)),
        hint_for(policy, prefix, token, *allowed)});
  }
}

}  // namespace kernelhub::abi
