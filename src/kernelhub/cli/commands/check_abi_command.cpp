// SPDX-License-Identifier: Apache-2.0
// `check-abi [DIR | FILE...]`: checks every library of a kernel's build variants (or the
// files given) against the manylinux, dependency, Python abi3, torch stable ABI and macOS
// rules, reports every violation sorted and de-duplicated, and exits 1 when there is any.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <kernelhub/abi/abi_checker.hpp>
#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/util/fatal_error.hpp>

namespace kernelhub::cli::commands {

namespace {

struct CheckAbiOptions {
  std::vector<std::string> paths;
  abi::CheckOptions check;
  std::string torch_stable_abi;
  bool json = false;
};

std::string plural(std::size_t count, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", count, count == 1 ? one : many);
}

std::string summary(const abi::CheckOptions& options, const abi::CheckReport& report) {
  std::size_t failing = 0;
  const auto& violations = report.violations;
  for (std::size_t i = 0; i < violations.size(); ++i) {
    if (i == 0 || violations[i].library != violations[i - 1].library) {
      ++failing;
    }
  }
  auto targets = fmt::format("{}, Python {} abi3, macOS {}", options.manylinux,
                             options.python_abi, options.macos);
  if (options.torch_stable_abi) {
    targets += fmt::format(", torch stable ABI {}", *options.torch_stable_abi);
  }
  auto checked = plural(report.libraries.size(), "library", "libraries");
  if (violations.empty()) {
    return fmt::format("checked {} against {}: no ABI violations\n", checked, targets);
  }
  return fmt::format("checked {} against {}: {} in {}\n", checked, targets,
                     plural(violations.size(), "ABI violation", "ABI violations"),
                     plural(failing, "library", "libraries"));
}

void run_check_abi(CheckAbiOptions options, RunState& state) {
  if (!options.torch_stable_abi.empty()) {
    options.check.torch_stable_abi = options.torch_stable_abi;
  }
  const auto* data = value_or_fatal(abi::embedded_abi_data());
  std::vector<std::filesystem::path> arguments(options.paths.begin(), options.paths.end());
  auto report = value_or_fatal(abi::check_paths(*data, options.check, arguments));

  std::string text;
  if (options.json) {
    std::vector<std::string> names;
    for (const auto& library : report.libraries) {
      names.push_back(library.string());
    }
    text = abi::violations_to_json(names, report.violations);
  } else {
    std::vector<util::Diagnostic> diagnostics;
    for (const auto& violation : report.violations) {
      diagnostics.push_back(abi::to_diagnostic(violation));
    }
    text += util::render_hints_once(diagnostics);
    text += summary(options.check, report);
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (!report.violations.empty()) {
    state.exit_code = 1;
  }
}

}  // namespace

void declare_check_abi(CLI::App& app, RunState& state) {
  auto* sub = app.add_subcommand("check-abi");
  auto options = std::make_shared<CheckAbiOptions>();
  sub->add_option("paths", options->paths,
                  "a kernel directory (its variants are found in result/, build/ or the "
                  "directory itself) or library files; default: the current directory")
      ->type_name("DIR | FILE...");
  sub->add_option("-m,--manylinux", options->check.manylinux,
                  "the policy: a manylinux policy or alias, \"current\" (manylinux_2_28, "
                  "dynamic libstdc++ allowed) or \"strict\" (manylinux_2_27, no dynamic "
                  "libstdc++)")
      ->capture_default_str()
      ->type_name("POLICY");
  sub->add_option("-p,--python-abi", options->check.python_abi,
                  "the oldest Python the abi3 libraries must load in")
      ->capture_default_str()
      ->type_name("VERSION");
  sub->add_option("--torch-stable-abi", options->torch_stable_abi,
                  "check the torch stable ABI: the oldest torch the libraries must load with")
      ->type_name("VERSION");
  sub->add_option("--macos", options->check.macos,
                  "the oldest macOS the Mach-O libraries must load on")
      ->capture_default_str()
      ->type_name("VERSION");
  sub->add_flag("--json", options->json, "print the libraries and violations as JSON");
  sub->callback([options, &state] { run_check_abi(*options, state); });
}

}  // namespace kernelhub::cli::commands
