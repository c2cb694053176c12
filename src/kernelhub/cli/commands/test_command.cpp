// SPDX-License-Identifier: Apache-2.0
// `kernel-builder test [DIR] [--variant V] [--python PATH] [--json] [-- PYTEST ARGS...]`: runs
// the kernel's pytest tests marked kernels_ci against one built variant; the exit status is
// pytest's, except that "no tests collected" passes.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <kernelhub/builder/probe_cache.hpp>
#include <kernelhub/builder/test_runner.hpp>
#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/cli/commands/loader_python.hpp>

namespace kernelhub::cli::commands {

namespace {

struct TestCommandOptions {
  std::string dir = ".";
  std::string variant;
  std::string python = "python3";
  std::vector<std::string> pytest_args;
  bool json = false;
};

void run_test(const TestCommandOptions& options, RunState& state) {
  require_directory(options.dir);
  builder::TestOptions test;
  // A path with a folder in it is made absolute: pytest runs in the tests' folder, where a
  // relative `.venv/bin/python` would name nothing. A bare name is looked up on PATH.
  const auto python = builder_python(options.python);
  test.python = python.find('/') == std::string::npos
                    ? python
                    : std::filesystem::absolute(python).string();
  if (!options.variant.empty()) {
    test.variant = options.variant;
  }
  test.pytest_args = options.pytest_args;
  test.probe_cache = builder::probe_cache_dir();
  builder::SubprocessCommandRunner runner;
  const variants::SubprocessRunner probe;
  const auto run = value_or_fatal(builder::run_kernel_tests(options.dir, test, runner, probe));
  state.exit_code = run.exit_status;
  if (options.json) {
    nlohmann::ordered_json out;
    out["variant"] = run.variant;
    out["reason"] = run.reason;
    out["pytest_status"] = run.pytest_status;
    out["passed"] = run.exit_status == 0;
    std::puts(out.dump(2).c_str());
  } else if (run.pytest_status == 5) {
    std::fprintf(stderr, "No kernels_ci tests were collected for %s; nothing to run\n",
                 run.variant.c_str());
  }
}

}  // namespace

void declare_test(CLI::App& app, RunState& state) {
  auto options = std::make_shared<TestCommandOptions>();
  auto* sub = app.add_subcommand("test");
  sub->add_option("DIR", options->dir, "the kernel's folder (holds build.toml and tests/)")
      ->capture_default_str();
  sub->add_option("--variant", options->variant,
                  "the built variant to test (default: the one the kernels loader would pick "
                  "on this machine)");
  sub->add_option("--python", options->python, "the Python with torch and pytest")
      ->capture_default_str();
  sub->add_option("PYTEST_ARGS", options->pytest_args, "more pytest arguments, after DIR and --");
  sub->add_flag("--json", options->json,
                "print the tested variant, why it was chosen and pytest's status as JSON");
  sub->callback([options, &state] { run_test(*options, state); });
}

}  // namespace kernelhub::cli::commands
