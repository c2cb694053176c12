// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/abi/abi_data.hpp>
#include <kernelhub/abi/object_file.hpp>
#include <kernelhub/abi/policy.hpp>
#include <kernelhub/abi/violation.hpp>
#include <kernelhub/types/version.hpp>
#include <kernelhub/util/expected.hpp>

namespace kernelhub::abi {

// What `kernel-builder check-abi` checks against; the defaults are the reference's.
struct CheckOptions {
  std::string manylinux = "manylinux_2_28";  // a kernel or manylinux policy name, or an alias
  std::string python_abi = "3.9";
  std::optional<std::string> torch_stable_abi;  // unset: the torch rule is off
  std::string macos = "15.0";
};

// Runs every rule that applies to a library's format: ELF gets manylinux, dependencies,
// Python abi3 and (when asked) the torch stable ABI; Mach-O gets the minimum macOS version,
// Python abi3 and the torch stable ABI.
class AbiChecker {
 public:
  // Fails on an unknown policy or an unparsable version, naming the option.
  static util::Expected<AbiChecker> create(const AbiData& data, const CheckOptions& options);

  void check(const ObjectFile& object, std::string_view library, ViolationSink& sink) const;

  // Reads and checks one file; one that cannot be read or parsed is reported as an
  // object-file violation, so the other libraries are still checked.
  void check_file(const std::filesystem::path& path, ViolationSink& sink) const;

  const ResolvedPolicy& policy() const { return m_policy; }

 private:
  AbiChecker(const AbiData& data, ResolvedPolicy policy) : m_data(&data), m_policy(policy) {}

  const AbiData* m_data;
  ResolvedPolicy m_policy;
  types::Version m_python_abi;
  std::optional<types::Version> m_torch_stable_abi;
  types::Version m_macos;
};

// The result of checking a set of libraries: what was checked and every violation, sorted and
// de-duplicated.
struct CheckReport {
  std::vector<std::filesystem::path> libraries;
  std::vector<Violation> violations;
};

// What `check-abi` and, later, `build` run: finds the libraries for `arguments` (kernel
// directories and library files, library_discovery.hpp) and checks each one. Fails on bad
// options or a directory without variants; problems in a library are violations.
util::Expected<CheckReport> check_paths(const AbiData& data, const CheckOptions& options,
                                        const std::vector<std::filesystem::path>& arguments);

}  // namespace kernelhub::abi
