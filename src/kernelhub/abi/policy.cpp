// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/abi/policy.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/util/did_you_mean.hpp>

namespace kernelhub::abi {

namespace {

using nlohmann::json;

// nlohmann reports a wrong shape by exception; the embedded files are ours, but a broken
// edit must still end as an error value naming the file's problem.
template <typename F>
auto guarded(std::string_view what, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const json::exception& error) {
    return util::fail(fmt::format("malformed {}: {}", what, error.what()));
  }
}

}  // namespace

util::Expected<std::vector<ManylinuxPolicy>> parse_manylinux_policies(std::string_view text) {
  return guarded("manylinux policy", [&]() -> util::Expected<std::vector<ManylinuxPolicy>> {
    auto document = json::parse(text);
    std::vector<ManylinuxPolicy> policies;
    for (const auto& entry : document.at("policies")) {
      ManylinuxPolicy policy;
      policy.name = entry.at("name").get<std::string>();
      policy.aliases = entry.at("aliases").get<std::vector<std::string>>();
      for (const auto& [arch, prefixes] : entry.at("symbol_versions").items()) {
        auto& by_prefix = policy.symbol_versions[arch];
        for (const auto& [prefix, versions] : prefixes.items()) {
          auto& allowed = by_prefix[prefix];
          for (const auto& version : versions) {
            allowed.insert(version.get<std::string>());
          }
        }
      }
      for (const auto& library : entry.at("lib_whitelist")) {
        policy.lib_whitelist.insert(library.get<std::string>());
      }
      policies.push_back(std::move(policy));
    }
    return policies;
  });
}

util::Expected<KernelPolicies> parse_kernel_policies(std::string_view text) {
  return guarded("kernel policy", [&]() -> util::Expected<KernelPolicies> {
    auto document = json::parse(text);
    KernelPolicies result;
    result.default_name = document.at("default").get<std::string>();
    result.always_allowed_prefixes =
        document.at("always_allowed_prefixes").get<std::vector<std::string>>();
    for (const auto& entry : document.at("policies")) {
      KernelPolicy policy;
      policy.name = entry.at("name").get<std::string>();
      policy.manylinux = entry.at("manylinux").get<std::string>();
      auto libstdcxx = entry.at("dynamic_libstdcxx").get<std::string>();
      if (libstdcxx != "allowed" && libstdcxx != "forbidden") {
        return util::fail(fmt::format(
            "kernel policy \"{}\": dynamic_libstdcxx must be \"allowed\" or \"forbidden\", not "
            "\"{}\"",
            policy.name, libstdcxx));
      }
      policy.dynamic_libstdcxx =
          libstdcxx == "allowed" ? DynamicLibstdcxx::allowed : DynamicLibstdcxx::forbidden;
      policy.description = entry.value("description", "");
      result.policies.push_back(std::move(policy));
    }
    return result;
  });
}

namespace {

const ManylinuxPolicy* find_manylinux(std::string_view name,
                                      const std::vector<ManylinuxPolicy>& manylinux) {
  for (const auto& policy : manylinux) {
    if (policy.name == name) {
      return &policy;
    }
    for (const auto& alias : policy.aliases) {
      if (alias == name) {
        return &policy;
      }
    }
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> policy_names(const std::vector<ManylinuxPolicy>& manylinux,
                                      const KernelPolicies& kernel) {
  std::vector<std::string> names;
  for (const auto& policy : kernel.policies) {
    names.push_back(policy.name);
  }
  for (const auto& policy : manylinux) {
    names.push_back(policy.name);
    names.insert(names.end(), policy.aliases.begin(), policy.aliases.end());
  }
  return names;
}

util::Expected<ResolvedPolicy> resolve_policy(std::string_view name,
                                              const std::vector<ManylinuxPolicy>& manylinux,
                                              const KernelPolicies& kernel) {
  ResolvedPolicy resolved;
  resolved.name = std::string(name);
  resolved.always_allowed_prefixes = &kernel.always_allowed_prefixes;
  for (const auto& policy : kernel.policies) {
    if (policy.name == name) {
      resolved.manylinux = find_manylinux(policy.manylinux, manylinux);
      if (resolved.manylinux == nullptr) {
        return util::fail(fmt::format("kernel policy \"{}\" names unknown manylinux policy \"{}\"",
                                      policy.name, policy.manylinux));
      }
      resolved.dynamic_libstdcxx = policy.dynamic_libstdcxx;
      return resolved;
    }
  }
  resolved.manylinux = find_manylinux(name, manylinux);
  if (resolved.manylinux == nullptr) {
    auto names = policy_names(manylinux, kernel);
    std::vector<std::string_view> candidates(names.begin(), names.end());
    auto hint = util::did_you_mean(name, candidates);
    return util::fail(fmt::format("unknown manylinux policy \"{}\"{}{}; known policies: {}", name,
                                  hint.empty() ? "" : "; ", hint, fmt::join(names, ", ")));
  }
  return resolved;
}

}  // namespace kernelhub::abi
