// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include <kernelhub/cli/command.hpp>

namespace CLI {
class App;
}

namespace kernelhub::cli {

struct Program {
  std::string_view name;         // "kernel-builder"
  std::string_view description;  // first line of --help
  std::span<const Command> commands;
};

const Program& kernel_builder_program();
const Program& kernelhub_program();

// Builds the CLI11 app for `program` with every command of its table declared on it.
std::unique_ptr<CLI::App> make_app(const Program& program, RunState& state);

// Parses argv, runs the chosen command and returns the exit code. Catches util::FatalError
// once, printing "<program>: error: <message>".
int run_program(const Program& program, int argc, char** argv);

}  // namespace kernelhub::cli
