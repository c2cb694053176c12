// SPDX-License-Identifier: Apache-2.0
// `kernel-builder completions bash|zsh|fish` and `kernelhub completions ...`: prints the shell
// completion script of the program it runs in, rendered from the program's command table.
#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include <kernelhub/cli/cli_reference.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/cli/completion_script.hpp>
#include <kernelhub/cli/program.hpp>

namespace kernelhub::cli::commands {

void declare_completions(CLI::App& app, RunState& /*state*/) {
  auto shell = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("completions");
  sub->add_option("SHELL", *shell, "the shell to complete for")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  // The app is named after its program before any command is declared on it (make_app).
  const bool is_kernel_builder = app.get_name() == kernel_builder_program().name;
  sub->callback([shell, is_kernel_builder] {
    const auto& program = is_kernel_builder ? kernel_builder_program() : kernelhub_program();
    // The model is built from a fresh app, exactly as generate-docs builds it.
    const auto script = completion_script(describe_program(program), *parse_shell(*shell));
    std::fwrite(script.data(), 1, script.size(), stdout);
  });
}

}  // namespace kernelhub::cli::commands
