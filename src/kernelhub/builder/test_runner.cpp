// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/test_runner.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/builder/probe_cache.hpp>
#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/metadata/built_variants.hpp>
#include <kernelhub/util/diagnostic.hpp>
#include <kernelhub/util/file_io.hpp>
#include <kernelhub/variants/acceptance.hpp>
#include <kernelhub/variants/system_detect.hpp>

#include <kernelhub/builder/step.hpp>
#include <kernelhub/builder/variant_selection.hpp>

namespace kernelhub::builder {

namespace {

namespace fs = std::filesystem;

// pytest's "no tests were collected" status.
constexpr int k_pytest_no_tests = 5;

constexpr std::string_view k_pytest_ini =
    "# Written by kernel-builder test for a kernel without a pytest configuration.\n"
    "[pytest]\n"
    "markers =\n"
    "    kernels_ci: tests that kernel CI runs against every built variant\n";

// The driver of one test run (test_runner.hpp), run as `python -c <this> <plan as JSON>`.
// Standard library only, for any Python a kernel is tested with. It writes its decision before
// pytest runs, so a crash in the tests leaves it behind for the report.
constexpr std::string_view k_test_driver = R"PY(import gc, importlib, json, os, sys


def has_device(backend):
    try:
        import torch
        if backend == "xpu":
            return bool(torch.xpu.is_available())
        return bool(torch.cuda.is_available())
    except Exception:
        return False


def main():
    plan = json.loads(sys.argv[1])
    try:
        import pytest
    except ImportError:
        decision = {"pytest": False}
    else:
        candidates = plan["candidates"]
        chosen = 1 if len(candidates) > 1 and not has_device(plan["device_backend"]) else 0
        decision = {"pytest": True, "chosen": chosen}
    with open(plan["decision"], "w") as stream:
        json.dump(decision, stream)
    if not decision["pytest"]:
        return 1
    candidate = candidates[chosen]
    os.symlink(candidate["dir"], plan["link"], target_is_directory=True)
    importlib.invalidate_caches()  # the shim folder was on sys.path before the link
    if plan["repo_id"]:
        entry = plan["repo_id"] + "=" + candidate["dir"]
        before = os.environ.get("LOCAL_KERNELS")
        os.environ["LOCAL_KERNELS"] = entry + ":" + before if before else entry
    sys.stderr.write("Testing %s (%s) with the kernels_ci tests in %s\n"
                     % (candidate["variant"], candidate["reason"], plan["tests"]))
    sys.stderr.flush()
    sys.argv = ["pytest"] + plan["pytest_args"]
    # pytest.console_main, with one plugin of ours.
    try:
        status = pytest.main(plan["pytest_args"], plugins=[FreezeAfterCollection()])
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


class FreezeAfterCollection:
    """What exists once the tests are collected (torch, the kernel, the test modules) lives
    until the exit; frozen, the exit's garbage collection does not walk it (half a second with
    torch). What the tests make is collected as before."""

    def pytest_collection_finish(self, session):
        gc.freeze()


sys.exit(main())
)PY";

std::string joined(std::span<const std::string> names) {
  std::string text;
  for (const auto& name : names) {
    text += (text.empty() ? "" : ", ") + name;
  }
  return text;
}

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// Prepends `first` to a ':'-separated list (empty parts would mean the current directory).
std::string prepend(const std::string& first, const std::string& rest, char separator) {
  return rest.empty() ? first : first + separator + rest;
}

// A fresh folder under the temporary directory; removed by its destructor.
class TemporaryFolder {
 public:
  static util::Expected<TemporaryFolder> create() {
    std::error_code error;
    auto base = fs::temp_directory_path(error);
    if (error) {
      base = "/tmp";
    }
    std::string pattern = (base / "kernelhub-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return util::fail(fmt::format("cannot create a temporary folder in \"{}\"", base.string()));
    }
    return TemporaryFolder(pattern);
  }
  TemporaryFolder(TemporaryFolder&& other) noexcept : m_path(std::exchange(other.m_path, {})) {}
  TemporaryFolder& operator=(TemporaryFolder&&) = delete;
  ~TemporaryFolder() {
    if (!m_path.empty()) {
      std::error_code error;
      fs::remove_all(m_path, error);
    }
  }
  const fs::path& path() const { return m_path; }

 private:
  explicit TemporaryFolder(fs::path path) : m_path(std::move(path)) {}
  fs::path m_path;
};

bool file_mentions(const fs::path& path, std::string_view needle) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    return false;
  }
  const auto text = util::read_file(path);
  return text && text->find(needle) != std::string::npos;
}

// Backends whose variants' tests need a device of theirs (a GPU) to run.
bool needs_device(types::Backend kind) {
  return kind == types::Backend::cuda || kind == types::Backend::rocm ||
         kind == types::Backend::xpu;
}

// This machine as `python` sees it, without asking torch whether its backend has a device:
// from the probe cache when `python` and its torch are unchanged, so no torch import. nullopt
// when the interpreter does not answer.
std::optional<variants::SystemInfo> probe_without_device(const fs::path& python,
                                                         CommandRunner& runner,
                                                         const std::optional<fs::path>& cache) {
  const auto script = variants::python_probe_script_without_device();
  if (script.empty()) {
    return std::nullopt;
  }
  const auto output = cached_probe(python, script, runner, cache);
  variants::BuildHost host;
  if (!output || !variants::apply_python_probe(*output, host)) {
    return std::nullopt;
  }
  return host.system;
}

}  // namespace

std::vector<variants::SystemBackend> runnable_backends(const variants::SystemBackend& detected,
                                                       bool device_available) {
  std::vector<variants::SystemBackend> backends;
  const auto kind = detected.kind;
  if (kind != types::Backend::cpu && (device_available || !needs_device(kind))) {
    backends.push_back(detected);
  }
  backends.push_back(variants::SystemBackend{types::Backend::cpu, {}});
  return backends;
}

util::Expected<std::string> choose_test_variant(std::span<const std::string> built,
                                                const variants::SystemInfo& system,
                                                std::span<const variants::SystemBackend> runnable,
                                                const std::optional<std::string>& requested) {
  if (built.empty()) {
    return util::fail("no built variants in build/; run `kernel-builder build` first");
  }
  if (requested) {
    const auto matches = match_variant_name(*requested, built);
    if (matches.empty()) {
      return util::fail(fmt::format("variant \"{}\" is not built; did you mean \"{}\"? (built "
                                    "variants: {})",
                                    *requested, closest_variant_name(*requested, built),
                                    joined(built)));
    }
    if (matches.size() > 1) {
      return util::fail(fmt::format("\"{}\" matches {} built variants ({}); name one of them",
                                    *requested, matches.size(), joined(matches)));
    }
    return matches.front();
  }
  std::string traces;
  for (const auto& backend : runnable) {
    auto with_backend = system;
    with_backend.backend = backend;
    const auto resolution = variants::resolve_variant_names(with_backend, built);
    if (const auto* best = resolution.best()) {
      return variants::to_string(*best);
    }
    traces += fmt::format("with backend {}:\n{}", backend.name(),
                          variants::render_trace(resolution.trace));
  }
  return util::fail(fmt::format(
      "none of the built variants runs on this machine; build one here with `kernel-builder "
      "build` or pass --variant\n{}",
      traces));
}

bool has_pytest_config(const fs::path& kernel_dir) {
  std::error_code error;
  return fs::is_regular_file(kernel_dir / "pytest.ini", error) ||
         file_mentions(kernel_dir / "pyproject.toml", "[tool.pytest") ||
         file_mentions(kernel_dir / "tox.ini", "[pytest]") ||
         file_mentions(kernel_dir / "setup.cfg", "[tool:pytest]");
}

fs::path test_decision_path(const fs::path& shim_dir) { return shim_dir / "decision.json"; }

TestInvocation test_invocation(const TestSetup& setup) {
  TestInvocation invocation;
  // -p no:cacheprovider: no .pytest_cache left in the kernel's folder.
  std::vector<std::string> pytest_args = {"tests", "-m", "kernels_ci", "-p", "no:cacheprovider"};
  if (!setup.kernel_has_pytest_config) {
    // Our ini declares the marker; --rootdir keeps pytest from climbing to a parent
    // project's configuration and keeps test ids relative to the kernel.
    invocation.pytest_ini = std::string(k_pytest_ini);
    pytest_args.insert(pytest_args.end(), {"-c", (setup.shim_dir / "pytest.ini").string(),
                                           "--rootdir", setup.kernel_dir.string()});
  }
  pytest_args.insert(pytest_args.end(), setup.pytest_args.begin(), setup.pytest_args.end());
  nlohmann::json candidates = nlohmann::json::array();
  for (const auto& candidate : setup.candidates) {
    candidates.push_back({{"variant", candidate.variant},
                          {"reason", candidate.reason},
                          {"dir", (setup.kernel_dir / "build" / candidate.variant).string()}});
  }
  const nlohmann::json plan = {
      {"candidates", candidates},
      {"device_backend", types::to_string(setup.device_backend)},
      {"decision", test_decision_path(setup.shim_dir).string()},
      {"link", (setup.shim_dir / setup.python_name).string()},
      {"repo_id", setup.repo_id ? nlohmann::json(*setup.repo_id) : nlohmann::json(nullptr)},
      {"tests", (setup.kernel_dir / "tests").string()},
      {"pytest_args", pytest_args},
  };
  invocation.command.argv = {setup.python, "-c", std::string(k_test_driver), plan.dump()};
  invocation.command.cwd = setup.kernel_dir;
  auto& env = invocation.command.env;
  env.emplace_back("PYTHONPATH",
                   prepend(setup.shim_dir.string(), env_or_empty("PYTHONPATH"), ':'));
  // Bytecode would land in build/<variant>/__pycache__, inside what gets uploaded.
  env.emplace_back("PYTHONDONTWRITEBYTECODE", "1");
  return invocation;
}

int test_exit_status(int pytest_status) {
  return pytest_status == k_pytest_no_tests ? 0 : pytest_status;
}

util::Expected<TestRun> run_kernel_tests(const fs::path& dir, const TestOptions& options,
                                         CommandRunner& runner,
                                         const variants::ProgramRunner& probe) {
  const auto kernel_dir = fs::absolute(dir).lexically_normal();
  util::DiagnosticCollector sink;
  const auto loaded = config::load_build_config(kernel_dir, sink);
  for (const auto& diagnostic : sink.sorted()) {
    std::fputs(util::render(diagnostic).c_str(), stderr);
  }
  if (!loaded) {
    return tl::unexpected(loaded.error());
  }
  const auto& config = loaded->config;
  std::error_code error;
  if (!fs::is_directory(kernel_dir / "tests", error)) {
    return util::fail(fmt::format("\"{}\" has no tests folder; the kernel's pytest tests live "
                                  "in tests/",
                                  kernel_dir.string()));
  }
  const auto python = runner.find_program(options.python);
  if (!python) {
    return util::fail(fmt::format(
        "python \"{}\" was not found; install Python 3 with torch and pytest or pass --python PATH",
        options.python));
  }
  const auto built = metadata::built_variant_names(kernel_dir);
  if (built.empty()) {
    return tl::unexpected(choose_test_variant(built, {}, {}, options.variant).error());
  }
  std::vector<TestCandidate> candidates;
  auto device_backend = types::Backend::cpu;
  if (options.variant) {
    candidates.push_back(
        {KH_TRY(choose_test_variant(built, {}, {}, options.variant)), "as --variant asked"});
  } else {
    const auto asked_device = [&] {
      variants::DetectOptions detect = variants::DetectOptions::from_environment();
      detect.pythons = {python->string()};
      return variants::detect_build_host(probe, detect).system;
    };
    auto cached = probe_without_device(*python, runner, options.probe_cache);
    const auto system = cached ? std::move(*cached) : asked_device();
    const auto detected = system.backend.kind;
    const auto pick = [&](bool device) {
      return choose_test_variant(built, system, runnable_backends(system.backend, device),
                                 std::nullopt);
    };
    // Why this variant, in words: a cuda variant's tests need its device, which the loader's
    // own choice (by how torch was built) does not ask for.
    const auto loader_pick = fmt::format(
        "the variant the kernels loader picks on this machine (backend {})", system.backend.name());
    const auto no_device = fmt::format(
        "torch here is a {0} build, but no {0} device is present, so the {0} variants' tests "
        "cannot run",
        types::to_string(detected));
    if (!needs_device(detected)) {
      candidates.push_back({KH_TRY(pick(true)), loader_pick});
    } else {
      auto with_device = pick(true);
      auto without_device = pick(false);
      if (with_device && without_device) {
        // The driver asks torch, in the interpreter that runs the tests.
        candidates = {{*with_device, loader_pick}, {*without_device, no_device}};
        device_backend = detected;
      } else if (!with_device && !without_device) {
        return tl::unexpected(with_device.error());
      } else if (asked_device().backend_device) {
        // One of the two fits: whether it is the one to test is the device's to say.
        candidates.push_back({KH_TRY(std::move(with_device)), loader_pick});
      } else {
        candidates.push_back({KH_TRY(std::move(without_device)), no_device});
      }
    }
  }

  const auto shim = KH_TRY(TemporaryFolder::create());
  TestSetup setup;
  setup.kernel_dir = kernel_dir;
  setup.shim_dir = shim.path();
  setup.python_name = config.general.name.python_name();
  setup.python = python->string();
  if (config.general.hub) {
    setup.repo_id = config.general.hub->repo_id;
  }
  setup.kernel_has_pytest_config = has_pytest_config(kernel_dir);
  setup.pytest_args = options.pytest_args;
  setup.candidates = candidates;
  setup.device_backend = device_backend;
  const auto invocation = test_invocation(setup);
  if (invocation.pytest_ini) {
    KH_STEP(util::write_file_atomic(shim.path() / "pytest.ini", *invocation.pytest_ini));
  }
  const int status = KH_TRY(runner.run(invocation.command));
  const auto decision_text = util::read_file(test_decision_path(shim.path()));
  const auto decision = decision_text
                            ? nlohmann::json::parse(*decision_text, nullptr, false)
                            : nlohmann::json();
  if (!decision.is_object()) {
    return util::fail(fmt::format("\"{}\" exited with status {} before the tests started",
                                  python->string(), status));
  }
  if (!decision.value("pytest", false)) {
    return util::fail(fmt::format("\"{}\" cannot import pytest; install it with `{} -m pip "
                                  "install pytest` or pass --python PATH",
                                  python->string(), python->string()));
  }
  const auto chosen = decision.value("chosen", std::size_t{0});
  if (chosen >= candidates.size()) {
    return util::fail(fmt::format("the test driver chose variant {} of {}", chosen,
                                  candidates.size()));
  }
  return TestRun{candidates[chosen].variant, test_exit_status(status), status,
                 candidates[chosen].reason};
}

}  // namespace kernelhub::builder
