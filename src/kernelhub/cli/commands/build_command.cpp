// SPDX-License-Identifier: Apache-2.0
// `kernel-builder build [DIR] [--python PATH] [--unique-id ID] [--json]` and
// `build-and-copy` (the same here): builds every variant of the kernel in DIR this machine can
// build into DIR/build/<variant>/, and says which backends it left out and why.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/builder/build_kernel.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/util/diagnostic.hpp>
#include <kernelhub/util/fatal_error.hpp>

namespace kernelhub::cli::commands {

namespace {

struct BuildCommandOptions {
  std::string dir = ".";
  std::string python = "python3";
  std::string unique_id;
  bool json = false;
};

void print_result(const builder::BuildResult& result, bool json) {
  if (json) {
    nlohmann::ordered_json out;
    out["unique_id"] = result.unique_id;
    out["variants"] = nlohmann::ordered_json::array();
    for (const auto& variant : result.variants) {
      out["variants"].push_back({{"name", variant.name},
                                 {"backend", types::to_string(variant.backend)},
                                 {"id", variant.id},
                                 {"path", variant.path.string()}});
    }
    out["skipped"] = nlohmann::ordered_json::array();
    for (const auto& skip : result.skipped) {
      out["skipped"].push_back(
          {{"backend", types::to_string(skip.backend)}, {"reason", skip.reason}});
    }
    std::puts(out.dump(2).c_str());
    return;
  }
  for (const auto& skip : result.skipped) {
    std::fprintf(stderr, "kernel-builder: warning: not building %s: %s\n",
                 std::string(types::to_string(skip.backend)).c_str(), skip.reason.c_str());
  }
  for (const auto& variant : result.variants) {
    std::printf("Built %s at %s\n", variant.name.c_str(), variant.path.string().c_str());
  }
}

void run_build(const BuildCommandOptions& options) {
  builder::BuildOptions build_options;
  build_options.python = options.python;
  if (!options.unique_id.empty()) {
    build_options.unique_id = options.unique_id;
  }
  build_options.builder_version = KERNELHUB_VERSION;
  builder::SubprocessCommandRunner runner;
  util::DiagnosticCollector diagnostics;
  auto result = builder::build_kernel(options.dir, build_options, runner, diagnostics);
  for (const auto& diagnostic : diagnostics.sorted()) {
    std::fputs(util::render(diagnostic).c_str(), stderr);
  }
  if (!result) {
    throw util::FatalError(result.error().message);
  }
  print_result(*result, options.json);
}

void declare_build_like(CLI::App& app, const char* name) {
  auto options = std::make_shared<BuildCommandOptions>();
  auto* sub = app.add_subcommand(name);
  sub->add_option("DIR", options->dir, "the kernel's folder (holds build.toml)")
      ->capture_default_str();
  sub->add_option("--python", options->python,
                  "the Python interpreter whose torch the kernel is built against")
      ->capture_default_str();
  sub->add_option("--unique-id", options->unique_id,
                  "the unique part of the kernel id (default: from git, else random)");
  sub->add_flag("--json", options->json, "print the built and skipped variants as JSON");
  sub->callback([options] { run_build(*options); });
}

}  // namespace

void declare_build(CLI::App& app, RunState& state) {
  (void)state;  // a build either succeeds or throws
  declare_build_like(app, "build");
}

void declare_build_and_copy(CLI::App& app, RunState& state) {
  (void)state;
  // Without Nix there is no store to copy out of: the variants are built in place already.
  declare_build_like(app, "build-and-copy");
}

}  // namespace kernelhub::cli::commands
