// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

#include <kernelhub/checks/kernel_checks.hpp>
#include <kernelhub/cli/command.hpp>

namespace CLI {
class App;
}

// What check-ops, check-layout and check-imports share: `NAME [DIR] [--json]` reads
// DIR/build.toml, runs one source check and reports every problem, exit status 1 on errors.
namespace kernelhub::cli::commands {

void declare_source_check(CLI::App& app, RunState& state, std::string_view name,
                          checks::SourceCheck check, std::string_view passed_message);

}  // namespace kernelhub::cli::commands
