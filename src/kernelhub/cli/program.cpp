// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cli/program.hpp>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <kernelhub/util/did_you_mean.hpp>
#include <kernelhub/util/fatal_error.hpp>

#ifndef KERNELHUB_VERSION
#define KERNELHUB_VERSION "0.0.0"
#endif

namespace kernelhub::cli {

const Program& kernel_builder_program() {
  static const Program program{"kernel-builder",
                               "Build, check and publish Hub compute kernels (PyTorch extensions)",
                               kernel_builder_commands()};
  return program;
}

const Program& kernelhub_program() {
  static const Program program{"kernelhub",
                               "Fetch, verify and load Hub compute kernels, and serve a Hub",
                               kernelhub_commands()};
  return program;
}

std::unique_ptr<CLI::App> make_app(const Program& program, RunState& state) {
  auto app = std::make_unique<CLI::App>(std::string(program.description), std::string(program.name));
  app->set_version_flag("-V,--version", fmt::format("{} {}", program.name, KERNELHUB_VERSION));
  app->require_subcommand(0, 1);
  for (const auto& command : program.commands) {
    command.declare(*app, state);
    // The table is the one source of each command's synopsis and visibility.
    auto* sub = app->get_subcommand(std::string(command.name));
    sub->description(std::string(command.synopsis));
    if (command.hidden) {
      sub->group("");
    }
  }
  return app;
}

namespace {

// The error for a first argument that names no command, or nullopt when it is not one.
std::optional<std::string> unknown_command_error(const Program& program, int argc,
                                                 char** argv) {
  if (argc < 2 || argv[1][0] == '-' || argv[1][0] == '\0') {
    return std::nullopt;  // options, or no command: CLI11 handles them
  }
  const std::string_view word = argv[1];
  std::vector<std::string_view> visible;
  for (const auto& command : program.commands) {
    if (command.name == word) {
      return std::nullopt;
    }
    if (!command.hidden) {
      visible.push_back(command.name);
    }
  }
  const auto suggestion = util::did_you_mean(word, visible);
  return suggestion.empty()
             ? fmt::format("unknown command \"{}\"; `{} --help` lists the commands", word,
                           program.name)
             : fmt::format("unknown command \"{}\"; {}", word, suggestion);
}

}  // namespace

int run_program(const Program& program, int argc, char** argv) {
  RunState state;
  auto app = make_app(program, state);
  // CLI11 would say "The following argument was not expected: buld"; a mistyped command gets
  // the did-you-mean build.toml errors get.
  if (const auto error = unknown_command_error(program, argc, argv)) {
    std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(program.name.size()),
                 program.name.data(), error->c_str());
    return 2;
  }
  try {
    app->parse(argc, argv);
    if (app->get_subcommands().empty()) {
      std::fputs(app->help().c_str(), stdout);
      return argc > 1 ? 2 : 0;
    }
  } catch (const CLI::ParseError& error) {
    return app->exit(error);
  } catch (const util::FatalError& error) {
    std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(program.name.size()),
                 program.name.data(), error.what());
    return 1;
  }
  return state.exit_code;
}

}  // namespace kernelhub::cli
