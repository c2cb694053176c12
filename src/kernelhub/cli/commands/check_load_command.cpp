// SPDX-License-Identifier: Apache-2.0
// `kernel-builder check-load [DIR] [--python PATH] [--backend B] [--json] [-v]`: loads each build
// variant of DIR (or DIR itself when it is a variant) with the reference loader,
// `kernels.get_local_kernel`, in a fresh Python process, and reports the exception of each
// one that fails (checks/import_check); -v adds the loader's whole output.
#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/abi/library_discovery.hpp>
#include <kernelhub/checks/import_check.hpp>
#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/build_checks.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/cli/commands/loader_python.hpp>

namespace kernelhub::cli::commands {

namespace {

struct CheckLoadOptions {
  std::string dir = ".";
  std::string python = "python3";
  std::string backend;
  bool json = false;
  bool verbose = false;
};

void run_check_load(const CheckLoadOptions& options, RunState& state) {
  require_directory(options.dir);
  const auto variants = value_or_fatal(abi::discover_variants(options.dir));
  const auto python = builder_python(options.python);
  auto check_options = load_check_options(python);
  if (!options.backend.empty()) {
    check_options.backend = options.backend;
  }
  checks::SubprocessScriptRunner runner;
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& variant : variants) {
    const auto result = value_or_fatal(checks::check_variant_import(variant, check_options, runner));
    if (result.loader_missing) {
      throw util::FatalError(fmt::format(
          "the reference loader is not installed in \"{}\"; install it with `{} -m pip install "
          "kernels`",
          python, python));
    }
    const auto name = variant.lexically_normal().generic_string();
    if (options.json) {
      nlohmann::ordered_json entry = {
          {"variant", name},
          {"backend", result.backend},
          {"loaded", result.loaded},
          {"error", result.loaded ? nlohmann::ordered_json()
                                  : nlohmann::ordered_json(result.error)}};
      if (options.verbose && !result.loaded) {
        entry["output"] = result.output;
      }
      out.push_back(std::move(entry));
    } else if (result.loaded) {
      std::printf("%s: loads with kernels.get_local_kernel (backend %s)\n", name.c_str(),
                  result.backend.c_str());
    } else {
      std::fprintf(stderr, "%s: error: kernels.get_local_kernel fails (backend %s): %s\n",
                   name.c_str(), result.backend.c_str(),
                   checks::indent_continuation(result.error, "  ").c_str());
      if (options.verbose) {
        std::fprintf(stderr, "%s\n", result.output.c_str());
      }
    }
    if (!result.loaded) {
      state.exit_code = 1;
    }
  }
  if (options.json) {
    std::fputs((nlohmann::ordered_json{{"variants", out}}.dump(2) + "\n").c_str(), stdout);
  }
}

}  // namespace

void declare_check_load(CLI::App& app, RunState& state) {
  auto options = std::make_shared<CheckLoadOptions>();
  auto* sub = app.add_subcommand("check-load");
  sub->add_option("DIR", options->dir,
                  "a build variant, or a kernel directory whose variants are found in result/, "
                  "build/ or the directory itself")
      ->capture_default_str();
  sub->add_option("--python", options->python,
                  "the interpreter to load with (needs torch and the kernels package)")
      ->capture_default_str();
  sub->add_option("--backend", options->backend,
                  "the backend to ask the loader for (default: each variant's own)");
  sub->add_flag("--json", options->json,
                "print {\"variants\": [{\"variant\", \"backend\", \"loaded\", \"error\"}]} "
                "(\"error\": the exception's message; with -v also \"output\")");
  sub->add_flag("-v,--verbose", options->verbose,
                "show the loader's whole output (the C++ or Python trace) of a failed load");
  sub->callback([options, &state] { run_check_load(*options, state); });
}

}  // namespace kernelhub::cli::commands
