// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <kernelhub/cli/cli_reference.hpp>

// `completions bash|zsh|fish`: shell completion scripts rendered from the same command model as
// docs/cli.md (cli_reference.hpp), so a command or option added to a command table completes
// without anyone touching a list of names.
namespace kernelhub::cli {

enum class Shell { bash, zsh, fish };

// "bash", "zsh" or "fish"; nothing for any other name.
std::optional<Shell> parse_shell(std::string_view name);

// The script for `program` (a describe_program() tree): its commands, each command's options
// (value options complete the values an IsMember check allows, otherwise file names), and
// file names for positional arguments. A pure function of the model.
std::string completion_script(const CommandDoc& program, Shell shell);

}  // namespace kernelhub::cli
