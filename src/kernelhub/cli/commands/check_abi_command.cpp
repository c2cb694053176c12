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
#include <kernelhub/abi/library_discovery.hpp>
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

template <typename T>
T value_or_fatal(util::Expected<T> result) {
  if (!result) {
    throw util::FatalError(result.error().message);
  }
  return std::move(*result);
}

std::string summary(const abi::AbiChecker& checker, const abi::CheckOptions& options,
                    std::size_t libraries, const std::vector<abi::Violation>& violations) {
  std::size_t failing = 0;
  for (std::size_t i = 0; i < violations.size(); ++i) {
    if (i == 0 || violations[i].library != violations[i - 1].library) {
      ++failing;
    }
  }
  auto targets = fmt::format("{}, Python {} abi3, macOS {}", checker.policy().name,
                             options.python_abi, options.macos);
  if (options.torch_stable_abi) {
    targets += fmt::format(", torch stable ABI {}", *options.torch_stable_abi);
  }
  if (violations.empty()) {
    return fmt::format("checked {} libraries against {}: no ABI violations\n", libraries,
                       targets);
  }
  return fmt::format("checked {} libraries against {}: {} ABI violations in {} libraries\n",
                     libraries, targets, violations.size(), failing);
}

void run_check_abi(CheckAbiOptions options, RunState& state) {
  if (!options.torch_stable_abi.empty()) {
    options.check.torch_stable_abi = options.torch_stable_abi;
  }
  const auto* data = value_or_fatal(abi::embedded_abi_data());
  auto checker = value_or_fatal(abi::AbiChecker::create(*data, options.check));
  std::vector<std::filesystem::path> arguments(options.paths.begin(), options.paths.end());
  auto libraries = value_or_fatal(abi::libraries_to_check(arguments));

  abi::ViolationCollector collector;
  std::vector<std::string> names;
  for (const auto& library : libraries) {
    checker.check_file(library, collector);
    names.push_back(library.string());
  }
  auto violations = collector.sorted();
  if (options.json) {
    auto text = abi::violations_to_json(names, violations);
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    std::string text;
    for (const auto& violation : violations) {
      text += util::render(abi::to_diagnostic(violation));
    }
    text += summary(checker, options.check, libraries.size(), violations);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  if (!violations.empty()) {
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
