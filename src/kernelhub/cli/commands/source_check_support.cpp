// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cli/commands/source_check_support.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/diagnostic_json.hpp>
#include <kernelhub/config/build_config_reader.hpp>

namespace kernelhub::cli::commands {

namespace {

struct SourceCheckOptions {
  std::string kernel_dir = ".";
  bool json = false;
  bool verbose = false;  // notes too (optional imports allowed)
};

void run_source_check_command(const SourceCheckOptions& options, checks::SourceCheck check,
                              const std::string& name, const std::string& passed,
                              RunState& state) {
  require_directory(options.kernel_dir);
  util::DiagnosticCollector config_diagnostics;
  auto loaded = config::load_build_config(options.kernel_dir, config_diagnostics);
  if (!loaded) {
    for (const auto& diagnostic : config_diagnostics.sorted()) {
      std::fputs(util::render(diagnostic).c_str(), stderr);
    }
    throw util::FatalError(loaded.error().message);
  }
  util::DiagnosticCollector diagnostics;
  checks::run_source_check(check, options.kernel_dir, *loaded, diagnostics);
  std::vector<util::Diagnostic> sorted;
  std::size_t problems = 0;
  for (auto& diagnostic : diagnostics.sorted()) {
    const bool note = diagnostic.severity == util::Severity::note;
    problems += note ? 0 : 1;
    if (!note || options.verbose) {
      sorted.push_back(std::move(diagnostic));
    }
  }
  const bool ok = !diagnostics.has_errors();
  if (options.json) {
    nlohmann::ordered_json out;
    out["check"] = name;
    out["ok"] = ok;
    out["diagnostics"] = diagnostics_to_json(sorted);
    std::fputs((out.dump(2) + "\n").c_str(), stdout);
  } else {
    for (const auto& diagnostic : sorted) {
      std::fputs(util::render(diagnostic).c_str(), stderr);
    }
    if (ok) {
      std::fputs(fmt::format("{}: {}\n", name, passed).c_str(), stdout);
    } else {
      std::fprintf(stderr, "%s: %zu problem%s found\n", name.c_str(), problems,
                   problems == 1 ? "" : "s");
    }
  }
  if (!ok) {
    state.exit_code = 1;
  }
}

}  // namespace

void declare_source_check(CLI::App& app, RunState& state, std::string_view name,
                          checks::SourceCheck check, std::string_view passed_message) {
  auto options = std::make_shared<SourceCheckOptions>();
  auto* sub = app.add_subcommand(std::string(name));
  sub->add_option("KERNEL_DIR", options->kernel_dir, "kernel directory holding build.toml")
      ->capture_default_str();
  sub->add_flag("--json", options->json,
                "print {\"check\", \"ok\", \"diagnostics\"} as JSON on stdout");
  sub->add_flag("-v,--verbose", options->verbose,
                "also show notes (check-imports: the optional imports it allowed)");
  sub->callback([options, check, name = std::string(name), passed = std::string(passed_message),
                 &state] { run_source_check_command(*options, check, name, passed, state); });
}

}  // namespace kernelhub::cli::commands
