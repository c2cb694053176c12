// SPDX-License-Identifier: Apache-2.0
// PLACEHOLDER: replaced by the real command.
#include <CLI/CLI.hpp>

#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/util/fatal_error.hpp>

namespace kernelhub::cli::commands {

void declare_check_abi(CLI::App& app, RunState& state) {
  (void)state;
  auto* sub = app.add_subcommand("check-abi", "not implemented yet");
  sub->callback([] { throw util::FatalError("`check-abi` is not implemented yet"); });
}

}  // namespace kernelhub::cli::commands
