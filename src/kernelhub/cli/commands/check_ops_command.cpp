// SPDX-License-Identifier: Apache-2.0
// `kernel-builder check-ops [DIR] [--json]`: every torch.library registration in the kernel's
// Python package must name its op through add_op_namespace_prefix (checks/op_registration_check).
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/cli/commands/source_check_support.hpp>

namespace kernelhub::cli::commands {

void declare_check_ops(CLI::App& app, RunState& state) {
  declare_source_check(app, state, "check-ops", checks::SourceCheck::op_registrations,
                       "every op registration uses add_op_namespace_prefix");
}

}  // namespace kernelhub::cli::commands
