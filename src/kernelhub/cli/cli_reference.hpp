// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <span>
#include <string>
#include <vector>

#include <kernelhub/cli/program.hpp>

// The CLI reference (docs/cli.md) is generated, never written by hand: each program's CLI11
// app is built with make_app, exactly as the executable builds it, and walked. A command's
// synopsis comes from the command table, its options from their real declarations, so the
// reference cannot describe an option the binary does not have.
namespace kernelhub::cli {

// One positional argument or option of a command, as its declaration describes it.
struct ArgumentDoc {
  std::vector<std::string> names;  // "-f", "--force"; a positional has its one name, "PATH"
  std::string value_name;          // "TEXT", "FILE"; empty for a flag
  std::string description;
  std::string default_value;                // empty when CLI11 knows no default
  std::vector<std::string> allowed_values;  // from an IsMember check; empty when any value goes
  std::vector<std::string> checks;          // other validators: "DIR", "INT in [1 - 64]"
  std::string environment;                  // the variable that can set it, if any
  std::vector<std::string> excludes;        // options that cannot be combined with this one
  bool required = false;
  bool flag = false;        // takes no value
  bool repeatable = false;  // takes any number of values
};

// One command (or the program itself, the root of the tree). Hidden commands are left out.
struct CommandDoc {
  std::string path;      // "kernel-builder init": the words that run it
  std::string synopsis;  // the command table's one line; the program's description at the root
  std::string usage;     // "kernel-builder init [OPTIONS] [PATH]"
  std::vector<ArgumentDoc> positionals;
  std::vector<ArgumentDoc> options;  // without -h/--help, which every command has
  std::vector<CommandDoc> subcommands;  // in table (declaration) order
};

// Builds `program`'s app and describes it.
CommandDoc describe_program(const Program& program);

// Both programs, kernel-builder first: the content of docs/cli.md.
std::vector<CommandDoc> describe_all_programs();

// docs/cli.md: a short preamble and index, then one section per program and one subsection
// per command. Deterministic, so a drift test can compare it byte for byte.
std::string render_markdown(std::span<const CommandDoc> programs);

// The same model as JSON ({"programs": [...]}), for scripts and tests that walk the commands.
std::string render_json(std::span<const CommandDoc> programs);

}  // namespace kernelhub::cli
