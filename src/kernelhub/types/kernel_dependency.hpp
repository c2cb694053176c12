// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <kernelhub/util/expected.hpp>

namespace kernelhub::types {

// A `kernel-depends` entry, in build.toml (edition 5) and in metadata.json: another Hub kernel,
// pinned by major version or by revision. Exactly one of the two is set in a valid entry;
// the readers enforce that with `check()` so both formats report it the same way.
struct KernelDependency {
  std::string repo_id;
  std::optional<std::uint64_t> version;
  std::optional<std::string> revision;

  // Errors: "\"version\" and \"revision\" are mutually exclusive",
  // "either \"version\" or \"revision\" must be specified".
  util::Expected<void> check() const;

  friend bool operator==(const KernelDependency&, const KernelDependency&) = default;
};

}  // namespace kernelhub::types
