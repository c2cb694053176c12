// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include <kernelhub/variants/system.hpp>

// The interpreter whose torch decides which variant `kernelhub download` and `versions` pick.
namespace kernelhub::cli::commands {

// This machine as the loader sees it: asks `python` (--python) when given, else the ones
// variants::DetectOptions::from_environment names (KERNELHUB_PYTHON, the python3 beside this
// program, PATH's). Says on stderr which interpreter answered without torch, or that none
// answered, since the choice then assumes no torch.
variants::SystemInfo detect_loader_system(const std::string& python);

// kernel-builder's `--python`, whose default is "python3": left at it, the python3 beside the
// program when it has one (the environment it is installed in), as PATH's python3 may be
// another interpreter without torch (issue 13 item 7); anything given is kept.
std::string builder_python(const std::string& python);

// kernelhub's `--python` option, one declaration for every command that asks the loader's
// interpreter: "the interpreter whose torch decides <decides> (default: ...)".
CLI::Option* add_loader_python_option(CLI::App& sub, std::string& python,
                                      std::string_view decides);

}  // namespace kernelhub::cli::commands
