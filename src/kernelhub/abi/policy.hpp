// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/util/expected.hpp>

namespace kernelhub::abi {

template <typename T>
using StringMap = std::map<std::string, T, std::less<>>;
using StringSet = std::set<std::string, std::less<>>;

// One entry of auditwheel's manylinux-policy.json.
struct ManylinuxPolicy {
  std::string name;  // "manylinux_2_28"
  std::vector<std::string> aliases;
  // architecture ("x86_64") -> version prefix ("GLIBC") -> the version tokens it may require
  // ("2.17", "TM_1"). Membership, not an upper bound: auditwheel compares sets the same way.
  StringMap<StringMap<StringSet>> symbol_versions;
  StringSet lib_whitelist;  // sonames a wheel may need from the system
};

enum class DynamicLibstdcxx { allowed, forbidden };

// A named kernel requirement on top of a manylinux policy (data/abi/kernel-policies.json).
struct KernelPolicy {
  std::string name;       // "strict"
  std::string manylinux;  // the manylinux policy it builds on
  DynamicLibstdcxx dynamic_libstdcxx = DynamicLibstdcxx::allowed;
  std::string description;
};

struct KernelPolicies {
  std::string default_name;
  std::vector<std::string> always_allowed_prefixes;  // the dynamic loader: "ld-linux"
  std::vector<KernelPolicy> policies;
};

util::Expected<std::vector<ManylinuxPolicy>> parse_manylinux_policies(std::string_view json);
util::Expected<KernelPolicies> parse_kernel_policies(std::string_view json);

// The rules' view of a --manylinux value: its manylinux policy, and how a dynamic libstdc++
// is judged. `name` is what the user chose ("strict", "manylinux2014", "manylinux_2_28").
struct ResolvedPolicy {
  std::string name;
  const ManylinuxPolicy* manylinux = nullptr;
  DynamicLibstdcxx dynamic_libstdcxx = DynamicLibstdcxx::allowed;
  const std::vector<std::string>* always_allowed_prefixes = nullptr;
};

// Finds a kernel policy by name, else a manylinux policy by name or alias. A plain manylinux
// policy allows a dynamic libstdc++, as its whitelist does. The error lists the known names
// with a did-you-mean hint.
util::Expected<ResolvedPolicy> resolve_policy(std::string_view name,
                                              const std::vector<ManylinuxPolicy>& manylinux,
                                              const KernelPolicies& kernel);

// Every name resolve_policy() accepts, in file order.
std::vector<std::string> policy_names(const std::vector<ManylinuxPolicy>& manylinux,
                                      const KernelPolicies& kernel);

}  // namespace kernelhub::abi
