// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/test_runner.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <system_error>

#include <fmt/format.h>

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

}  // namespace

std::vector<variants::SystemBackend> runnable_backends(const variants::SystemBackend& detected,
                                                       bool device_available) {
  std::vector<variants::SystemBackend> backends;
  const auto kind = detected.kind;
  const bool needs_device = kind == types::Backend::cuda || kind == types::Backend::rocm ||
                            kind == types::Backend::xpu;
  if (kind != types::Backend::cpu && (device_available || !needs_device)) {
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

TestInvocation test_invocation(const TestSetup& setup) {
  TestInvocation invocation;
  auto& argv = invocation.command.argv;
  // -p no:cacheprovider: no .pytest_cache left in the kernel's folder.
  argv = {setup.python, "-m", "pytest", "tests", "-m", "kernels_ci", "-p", "no:cacheprovider"};
  if (!setup.kernel_has_pytest_config) {
    // Our ini declares the marker; --rootdir keeps pytest from climbing to a parent
    // project's configuration and keeps test ids relative to the kernel.
    invocation.pytest_ini = std::string(k_pytest_ini);
    argv.insert(argv.end(), {"-c", (setup.shim_dir / "pytest.ini").string(),
                             "--rootdir", setup.kernel_dir.string()});
  }
  argv.insert(argv.end(), setup.pytest_args.begin(), setup.pytest_args.end());
  invocation.command.cwd = setup.kernel_dir;
  auto& env = invocation.command.env;
  env.emplace_back("PYTHONPATH",
                   prepend(setup.shim_dir.string(), env_or_empty("PYTHONPATH"), ':'));
  // Bytecode would land in build/<variant>/__pycache__, inside what gets uploaded.
  env.emplace_back("PYTHONDONTWRITEBYTECODE", "1");
  if (setup.repo_id) {
    env.emplace_back("LOCAL_KERNELS", prepend(*setup.repo_id + "=" + setup.variant_dir.string(),
                                              env_or_empty("LOCAL_KERNELS"), ':'));
  }
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
  if (!runner.capture({{python->string(), "-c", "import pytest"}, {}})) {
    return util::fail(fmt::format("\"{}\" cannot import pytest; install it with `{} -m pip "
                                  "install pytest` or pass --python PATH",
                                  python->string(), python->string()));
  }

  const auto built = metadata::built_variant_names(kernel_dir);
  variants::SystemInfo system;
  std::vector<variants::SystemBackend> runnable;
  if (!options.variant && !built.empty()) {
    variants::DetectOptions detect = variants::DetectOptions::from_environment();
    detect.pythons = {python->string()};
    system = variants::detect_build_host(probe, detect).system;
    // The probe that named the backend asked torch for its device too (is_available()): a
    // second interpreter importing torch only for that cost seconds.
    const bool device = system.backend.kind != types::Backend::cpu && system.backend_device;
    runnable = runnable_backends(system.backend, device);
  }
  const auto variant = KH_TRY(choose_test_variant(built, system, runnable, options.variant));
  // Why this variant, in words: a cuda variant's tests need its device, which the loader's
  // own choice (by how torch was built) does not ask for.
  std::string why = "as --variant asked";
  if (!options.variant) {
    const auto detected = system.backend.kind;
    const bool device_missing = detected != types::Backend::cpu &&
                                (runnable.empty() || runnable.front().kind != detected);
    why = device_missing
              ? fmt::format("torch here is a {} build, but no {} device is present, so the {} "
                            "variants' tests cannot run",
                            types::to_string(detected), types::to_string(detected),
                            types::to_string(detected))
              : fmt::format("the variant the kernels loader picks on this machine (backend {})",
                            system.backend.name());
  }

  const auto shim = KH_TRY(TemporaryFolder::create());
  const auto variant_dir = kernel_dir / "build" / variant;
  fs::create_directory_symlink(variant_dir, shim.path() / config.general.name.python_name(),
                               error);
  if (error) {
    return util::fail(fmt::format("cannot link \"{}\" into \"{}\": {}", variant_dir.string(),
                                  shim.path().string(), error.message()));
  }
  TestSetup setup{kernel_dir, variant_dir, shim.path(), python->string(), std::nullopt,
                  has_pytest_config(kernel_dir), options.pytest_args};
  if (config.general.hub) {
    setup.repo_id = config.general.hub->repo_id;
  }
  const auto invocation = test_invocation(setup);
  if (invocation.pytest_ini) {
    KH_STEP(util::write_file_atomic(shim.path() / "pytest.ini", *invocation.pytest_ini));
  }
  std::fprintf(stderr, "Testing %s (%s) with the kernels_ci tests in %s\n", variant.c_str(),
               why.c_str(), (kernel_dir / "tests").c_str());
  const int status = KH_TRY(runner.run(invocation.command));
  return TestRun{variant, test_exit_status(status), status, why};
}

}  // namespace kernelhub::builder
