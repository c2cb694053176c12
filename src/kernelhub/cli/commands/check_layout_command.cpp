// SPDX-License-Identifier: Apache-2.0
// `kernel-builder check-layout [DIR] [--json]`: the kernel's package and the sources build.toml
// lists are where the build expects them (checks/source_layout_check).
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/cli/commands/source_check_support.hpp>

namespace kernelhub::cli::commands {

void declare_check_layout(CLI::App& app, RunState& state) {
  declare_source_check(app, state, "check-layout", checks::SourceCheck::layout,
                       "the source layout is as the build expects");
}

}  // namespace kernelhub::cli::commands
