// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <kernelhub/config/build_config.hpp>
#include <kernelhub/config/toml_reader.hpp>

// The [kernel.<name>] tables, the same in editions 2 to 5.
namespace kernelhub::config::detail {

// Reads every [kernel.<name>] in file order. A bare `[kernel]` with no entries is allowed (the
// reference's noarch examples write one).
std::vector<Kernel> read_kernels(TableReader& root);

// Reads `depends`, reporting unknown dependencies with a suggestion.
std::optional<std::vector<Dependency>> read_dependencies(TableReader& table, Need need);

// The kernel tables of `root` ("kernel"), with a type error for non-tables; calls `read` for
// each, in file order.
void for_each_kernel_table(TableReader& root,
                           const std::function<void(const std::string& name, TableReader&)>& read);

}  // namespace kernelhub::config::detail
