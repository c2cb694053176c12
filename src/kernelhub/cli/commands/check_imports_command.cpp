// SPDX-License-Identifier: Apache-2.0
// `kernel-builder check-imports [DIR] [--json]`: the kernel's Python imports its own modules
// relatively and nothing beyond the standard library, torch and its python-depends
// (checks/python_imports_check).
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/cli/commands/source_check_support.hpp>

namespace kernelhub::cli::commands {

void declare_check_imports(CLI::App& app, RunState& state) {
  declare_source_check(app, state, "check-imports", checks::SourceCheck::python_imports,
                       "every import is relative, standard, torch's or declared");
}

}  // namespace kernelhub::cli::commands
