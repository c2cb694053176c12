// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <kernelhub/builder/command_runner.hpp>
#include <kernelhub/util/expected.hpp>
#include <kernelhub/variants/program_runner.hpp>
#include <kernelhub/variants/system.hpp>

// `kernel-builder test`: runs a kernel's own pytest tests marked `kernels_ci` against one of
// its built variants, as the reference's `ci-test` output does (`pytest tests -m kernels_ci`,
// exit status 5 accepted; builder.md §4). The tests import the kernel by its Python name, so
// the variant is put on PYTHONPATH under that name through a symlink in a temporary folder;
// LOCAL_KERNELS also maps the repo id to it, for tests that call `kernels.get_kernel`.
namespace kernelhub::builder {

struct TestOptions {
  std::string python = "python3";          // the interpreter with torch and pytest
  std::optional<std::string> variant;      // default: the loader's pick for this machine
  std::vector<std::string> pytest_args;    // passed after ours (e.g. -k, -x)
  // Where the probe of the interpreter (without its device) is cached; none: asked each time.
  std::optional<std::filesystem::path> probe_cache;
};

// The backends whose variants can run here, best first (the reference's order: cuda, rocm,
// xpu, metal, then cpu). `detected` is the loader's backend, which follows how torch was built
// (torch.version.cuda), so a CUDA, ROCm or XPU build counts only when its device is present.
std::vector<variants::SystemBackend> runnable_backends(const variants::SystemBackend& detected,
                                                       bool device_available);

// The variant to test: `requested` when it was built, else, for the first backend of
// `runnable` that has one, the variant the reference loader would pick on `system` with that
// backend (arch before noarch, the newest torch). Errors name the built variants and why
// none fits.
util::Expected<std::string> choose_test_variant(std::span<const std::string> built,
                                                const variants::SystemInfo& system,
                                                std::span<const variants::SystemBackend> runnable,
                                                const std::optional<std::string>& requested);

// One variant the tests may run against, and why it would be the one.
struct TestCandidate {
  std::string variant;
  std::string reason;
};

// What one test run executes; a pure function of its inputs. One interpreter does it all: a
// small driver (`python -c`) that, given two candidates, imports torch and asks whether its
// backend has a device here (the first candidate if so, else the second; the tests import
// torch anyway, so the question costs no interpreter of its own), links the chosen variant
// into the shim folder, says which it tests, and runs pytest in the same process.
struct TestInvocation {
  Command command;
  // Written into the shim folder when the kernel brings no pytest configuration of its own:
  // it declares the `kernels_ci` marker so `-m kernels_ci` raises no unknown-marker warning.
  std::optional<std::string> pytest_ini;
};

struct TestSetup {
  std::filesystem::path kernel_dir;
  std::filesystem::path shim_dir;  // gets the <python name> symlink (and pytest.ini)
  std::string python_name;         // the kernel's Python package name
  std::string python;
  std::optional<std::string> repo_id;
  bool kernel_has_pytest_config = false;
  std::vector<std::string> pytest_args;
  // One, or two: the first when `device_backend`'s device is present, else the second.
  std::vector<TestCandidate> candidates;
  types::Backend device_backend = types::Backend::cpu;
};

TestInvocation test_invocation(const TestSetup& setup);

// Where the driver writes its decision (the chosen candidate, or that pytest is missing)
// before pytest runs.
std::filesystem::path test_decision_path(const std::filesystem::path& shim_dir);

// Whether `kernel_dir` holds a pytest configuration (pytest.ini, or a pyproject.toml,
// tox.ini or setup.cfg with a pytest section).
bool has_pytest_config(const std::filesystem::path& kernel_dir);

// pytest's status as ours: 5 ("no tests collected") is a pass.
int test_exit_status(int pytest_status);

struct TestRun {
  std::string variant;
  int exit_status = 0;  // after test_exit_status
  int pytest_status = 0;
  // Why this variant: --variant, the loader's pick, or that the loader's backend has no
  // device here ("... no cuda device is present ...").
  std::string reason;
};

// Reads build.toml, chooses the variant (detecting this machine through the cached probe of
// the interpreter when none is requested; through `probe`, which asks for the device, only
// when a variant fits with a device and none without, or the other way round), and runs
// pytest with `runner`.
util::Expected<TestRun> run_kernel_tests(const std::filesystem::path& kernel_dir,
                                         const TestOptions& options, CommandRunner& runner,
                                         const variants::ProgramRunner& probe);

}  // namespace kernelhub::builder
