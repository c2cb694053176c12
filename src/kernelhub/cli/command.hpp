// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <span>
#include <string_view>

namespace CLI {
class App;
}

namespace kernelhub::cli {

// Shared state of one CLI run: subcommand callbacks set the exit code here (1 for "found
// problems"); hard failures throw util::FatalError instead.
struct RunState {
  int exit_code = 0;
};

// One row of a program's command table (ninja's kTools[]): the subcommand's name, its
// one-line synopsis and the function that declares its options and callback on `app`.
struct Command {
  std::string_view name;
  std::string_view synopsis;
  void (*declare)(CLI::App& app, RunState& state);
  bool hidden = false;
};

std::span<const Command> kernel_builder_commands();
std::span<const Command> kernelhub_commands();

}  // namespace kernelhub::cli
