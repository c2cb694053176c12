// SPDX-License-Identifier: Apache-2.0
// `kernel-builder check-config [DIR]`: reads DIR/build.toml (any edition) and reports every
// problem, sorted by position. Exit status 1 when there are errors; warnings alone (a legacy
// edition upgraded in memory, say) leave it 0.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/cli/diagnostic_json.hpp>
#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/util/fatal_error.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::cli::commands {

namespace {

namespace fs = std::filesystem;

struct CheckConfigOptions {
  std::string kernel_dir = ".";
  bool json = false;
};

void run_check_config(const CheckConfigOptions& options, RunState& state) {
  const fs::path dir(options.kernel_dir);
  require_directory(options.kernel_dir);
  const auto path = (dir / "build.toml").lexically_normal();
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw util::FatalError(fmt::format("no build.toml in \"{}\"", options.kernel_dir));
  }
  auto text = util::read_file(path);
  if (!text) {
    throw util::FatalError(text.error().message);
  }

  util::DiagnosticCollector diagnostics;
  const auto inspection = config::inspect_build_config(*text, path.string(), diagnostics);
  const auto sorted = diagnostics.sorted();
  const bool valid = inspection.loaded.has_value();
  if (options.json) {
    nlohmann::ordered_json out;
    out["valid"] = valid;
    out["edition"] =
        inspection.edition ? nlohmann::ordered_json(*inspection.edition) : nlohmann::ordered_json();
    out["diagnostics"] = nlohmann::ordered_json::array();
    for (const auto& d : sorted) {
      out["diagnostics"].push_back(diagnostic_to_json(d));
    }
    std::fputs((out.dump(2) + "\n").c_str(), stdout);
  } else {
    for (const auto& d : sorted) {
      std::fputs(util::render(d).c_str(), stderr);
    }
    if (valid) {
      std::fputs(fmt::format("{}: valid (edition {})\n", path.string(),
                             *inspection.edition).c_str(),
                 stdout);
    }
  }
  if (!valid) {
    state.exit_code = 1;
  }
}

}  // namespace

void declare_check_config(CLI::App& app, RunState& state) {
  auto options = std::make_shared<CheckConfigOptions>();
  auto* sub = app.add_subcommand("check-config");
  sub->add_option("KERNEL_DIR", options->kernel_dir, "kernel directory holding build.toml")
      ->capture_default_str();
  sub->add_flag("--json", options->json,
                "print {\"valid\", \"edition\", \"diagnostics\"} as JSON on stdout");
  sub->callback([options, &state] { run_check_config(*options, state); });
}

}  // namespace kernelhub::cli::commands
