// SPDX-License-Identifier: Apache-2.0
// `kernelhub benchmark REPO_ID|PATH [--version N | --branch B] [--iterations N] [--warmup N]
// [--workload NAME]... [--json] [--output FILE] [--visual BASE [--rasterized]] [--upload] [--python PATH]`: the
// reference's `kernels benchmark`. Timing a kernel means importing it into torch, so the work
// is done by the Python package's runner (kernelhub._benchmark_runner); this command
// finds the Python of the environment kernelhub is installed in and hands over to it, its
// output and exit status becoming ours.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/util/fatal_error.hpp>

namespace kernelhub::cli::commands {

namespace {

namespace fs = std::filesystem;

// Run with `python -c`: an interpreter without the kernelhub package gets a sentence naming
// itself and --python, not runpy's "Error while finding module specification".
constexpr const char* k_runner_bootstrap =
    "import sys\n"
    "try:\n"
    "    from kernelhub._benchmark_runner import main\n"
    "except ImportError as exc:\n"
    "    sys.exit(f'kernelhub: error: {sys.executable} cannot import the kernelhub package "
    "({exc}); give the Python it is installed in with --python')\n"
    "sys.exit(main(sys.argv[1:]))\n";

struct BenchmarkOptions {
  std::string kernel;
  std::string branch;
  int version = 0;
  int iterations = 100;
  int warmup = 10;
  std::vector<std::string> workloads;
  std::string output;
  bool json = false;
  std::string visual;
  bool rasterized = false;
  bool upload = false;
  std::string python;
};

// The interpreter beside this executable when it was installed into a virtual environment's
// bin/ (scripts/setup.sh installs into .venv), so the torch and kernelhub package next to it
// are used; else `python3` from PATH.
std::string default_python() {
  std::error_code ec;
  const auto self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const char* name : {"python3", "python"}) {
      const auto candidate = self.parent_path() / name;
      if (::access(candidate.c_str(), X_OK) == 0) {
        return candidate.string();
      }
    }
  }
  return "python3";
}

std::vector<std::string> runner_argv(const BenchmarkOptions& options, bool has_version,
                                     bool has_branch) {
  std::vector<std::string> argv = {
      options.python.empty() ? default_python() : options.python, "-c", k_runner_bootstrap,
      options.kernel};
  if (has_version) {
    argv.insert(argv.end(), {"--version", std::to_string(options.version)});
  }
  if (has_branch) {
    argv.insert(argv.end(), {"--branch", options.branch});
  }
  argv.insert(argv.end(), {"--iterations", std::to_string(options.iterations), "--warmup",
                           std::to_string(options.warmup)});
  for (const auto& workload : options.workloads) {
    argv.insert(argv.end(), {"--workload", workload});
  }
  if (!options.output.empty()) {
    argv.insert(argv.end(), {"--output", options.output});
  }
  if (options.json) {
    argv.emplace_back("--json");
  }
  if (!options.visual.empty()) {
    argv.insert(argv.end(), {"--visual", options.visual});
  }
  if (options.rasterized) {
    argv.emplace_back("--rasterized");
  }
  if (options.upload) {
    argv.emplace_back("--upload");
  }
  return argv;
}

// Replaces this process with the runner: stdin, stdout, stderr, signals and the exit status
// pass through untouched. Returns only when the interpreter cannot be started.
[[noreturn]] void exec_runner(const std::vector<std::string>& argv) {
  std::vector<char*> raw;
  raw.reserve(argv.size() + 1);
  for (const auto& arg : argv) {
    raw.push_back(const_cast<char*>(arg.c_str()));
  }
  raw.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  ::execvp(raw[0], raw.data());
  const int error = errno;
  throw util::FatalError(fmt::format(
      "cannot run the benchmark runner with Python \"{}\": {} (give the Python that has torch "
      "and kernelhub installed with --python)",
      argv[0], std::strerror(error)));
}

}  // namespace

void declare_benchmark(CLI::App& app, RunState&) {
  auto options = std::make_shared<BenchmarkOptions>();
  auto* sub = app.add_subcommand("benchmark");
  sub->add_option("REPO_ID", options->kernel,
                  "a Hub repository id (org/name, org/name@v1, org/name@branch) or a local "
                  "kernel directory (benchmarked as revision `local`)")
      ->required();
  auto* version = sub->add_option("--version", options->version,
                                  "the kernel version to benchmark (the v<N> branch)");
  auto* branch = sub->add_option("--branch", options->branch, "the branch to benchmark");
  sub->add_option("--iterations", options->iterations, "timed calls per workload")
      ->capture_default_str();
  sub->add_option("--warmup", options->warmup, "untimed calls per workload before timing")
      ->capture_default_str();
  sub->add_option("--workload", options->workloads,
                  "time only this workload, `large` or `ReluBenchmark.large` (repeatable; "
                  "default: every benchmark_<workload> of the scripts)")
      ->allow_extra_args(false);
  sub->add_flag("--json", options->json,
                "print the JSON result on stdout (the table still goes to stderr)");
  sub->add_option("--output", options->output, "write the JSON result to FILE");
  sub->add_option("--visual", options->visual,
                  "write bar charts of the results to media/<BASE>_light.svg and "
                  "media/<BASE>_dark.svg (needs matplotlib)");
  sub->add_flag("--rasterized", options->rasterized, "with --visual, PNG copies of the charts");
  sub->add_flag("--upload", options->upload,
                "store the JSON result in the kernel's repo on the hub (HF_ENDPOINT, HF_TOKEN) "
                "as benchmarks/<variant>/<device>.json, on the benchmarked branch");
  sub->add_option("--python", options->python,
                  "the Python with torch and kernelhub (default: the one installed beside this "
                  "program, else python3 on PATH)");
  sub->callback([options, version, branch] {
    exec_runner(runner_argv(*options, version->count() > 0, branch->count() > 0));
  });
}

}  // namespace kernelhub::cli::commands
