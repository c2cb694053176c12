// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <kernelhub/config/build_config.hpp>
#include <kernelhub/config/edition_schema.hpp>
#include <kernelhub/config/python_dependencies.hpp>
#include <kernelhub/config/toml_reader.hpp>

// [general] of editions 3-5, and the value checks the legacy readers share with it.
namespace kernelhub::config::detail {

// Reads [general] from the root table (reporting it when absent). The result is complete even
// when there were errors, with placeholders where values were unusable.
General read_general(TableReader& root, const EditionSchema& schema);

// A placeholder name for configs whose name could not be read.
types::KernelName placeholder_name();

// Reads `name`, reporting an invalid kernel name with a corrected spelling when there is one.
std::optional<types::KernelName> read_kernel_name(TableReader& table, std::string_view key);

// Reads a git URL (general.upstream, general.source).
std::optional<types::GitUrl> read_git_url(TableReader& table, std::string_view key);

// Reads a list of backends: exact lowercase names; duplicates are warned about.
std::optional<std::vector<types::Backend>> read_backends(TableReader& table, std::string_view key,
                                                         Need need);

// Reads `python-depends` of `scope`, reporting each name the allow-list does not have there.
std::optional<std::vector<std::string>> read_python_depends(TableReader& table,
                                                            PythonDependencyScope scope);

// Reads `kernel-depends`: an array of { repo-id, version | revision } tables.
std::optional<std::vector<KernelDependency>> read_kernel_depends(TableReader& table);

// The hint for keys that only exist from `edition` on.
std::string needs_edition_hint(int edition);

}  // namespace kernelhub::config::detail
