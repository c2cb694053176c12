// SPDX-License-Identifier: Apache-2.0
// PLACEHOLDER: replaced by the real command.
#include <CLI/CLI.hpp>

#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/util/fatal_error.hpp>

namespace kernelhub::cli::commands {

void declare_list_variants(CLI::App& app, RunState& state) {
  (void)state;
  auto* sub = app.add_subcommand("list-variants", "not implemented yet");
  sub->callback([] { throw util::FatalError("`list-variants` is not implemented yet"); });
}

}  // namespace kernelhub::cli::commands
