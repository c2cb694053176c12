// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include <kernelhub/types/version.hpp>
#include <kernelhub/util/expected.hpp>

namespace kernelhub::abi {

// A symbol -> version table read from one of the generated tab-separated data files
// (python-stable-abi.tsv, torch-shim-versions.tsv): '#' lines are comments, the name is the
// first column and the version the column `version_column` (0-based).
class VersionTable {
 public:
  static util::Expected<VersionTable> parse(std::string_view text, std::size_t version_column);

  // The version that added `name`, or nullptr when the table does not list it.
  const types::Version* find(std::string_view name) const;
  std::size_t size() const { return m_versions.size(); }

 private:
  std::map<std::string, types::Version, std::less<>> m_versions;
};

}  // namespace kernelhub::abi
