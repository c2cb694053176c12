// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <kernelhub/builder/build_plan.hpp>
#include <kernelhub/builder/command_runner.hpp>
#include <kernelhub/builder/sandbox.hpp>
#include <kernelhub/builder/variant_selection.hpp>
#include <kernelhub/util/diagnostic.hpp>
#include <kernelhub/util/expected.hpp>
#include <kernelhub/variants/release_version.hpp>

// `kernel-builder build`: builds the variants of a kernel this machine can build, without Nix,
// by driving CMake, Ninja and the Torch of a Python environment directly (issue 3).
//
// Layout under <kernel dir>/build/:
//   <variant>/                    the finished variants, as on the Hub (builder.md §8)
//   .kernelhub/<variant>/project  the generated CMake project (arch variants)
//   .kernelhub/<variant>/cmake    its CMake build tree, kept for incremental rebuilds
namespace kernelhub::builder {

struct BuildOptions {
  std::string python = "python3";           // the interpreter whose torch is built against
  std::optional<std::string> unique_id;     // overrides the git / random unique id
  std::string builder_version;              // provenance.kernel-builder.version
  // `--torch 2.14,2.15`: build against each release in its own cached environment
  // (torch_versions_env.hpp) made with `python`; empty: the torch of `python` itself.
  std::vector<variants::ReleaseVersion> torch_versions;
  std::filesystem::path torch_envs_root;    // empty: torch_envs_root()
  // Where the torch probe's answers are cached (probe_cache.hpp); empty: probe every time.
  std::optional<std::filesystem::path> probe_cache;
  // `--variant`: build only these of the variants this machine can build (empty: all of
  // them); a name it cannot build fails the build before anything is compiled.
  std::vector<std::string> variants;
  // What a name in `variants` that this machine cannot build does: fail the build (`--variant`)
  // or be left out (`verify-build`, which asks for every published variant); the build still
  // fails when none of them is left.
  UnbuildableVariants unbuildable = UnbuildableVariants::fail;
  // Called when a variant is about to compile (watch_for_work in incremental.hpp): before a
  // configure, or at ninja's first step; never in a no-op rebuild. May be called once per
  // variant.
  std::function<void()> on_compile;
  // Whether the build steps (cmake, ninja) run in the build sandbox (sandbox.hpp); bwrap is
  // looked for once a variant needs them, and its absence fails the build. off
  // (--no-sandbox): they run as they are, and the variants they build record
  // `sandboxed: false` in their provenance.
  Sandboxing sandbox = Sandboxing::on;
};

struct BuiltVariant {
  std::string name;
  types::Backend backend = types::Backend::cpu;
  std::string id;  // the kernel id; for noarch the id of this backend
  std::filesystem::path path;
};

struct BuildResult {
  std::string unique_id;
  std::vector<BuiltVariant> variants;
  std::vector<SkippedBackend> skipped;
  // What the build learnt about BuildOptions::python when it built against that Python's own
  // torch (no --torch), so the checks after it need not start the interpreter to ask again:
  // its torch, and modules_fingerprint(python, {"torch", "kernels"}) (with a probe cache).
  std::optional<TorchEnvironment> torch;
  std::optional<std::string> python_fingerprint;
};

// Reads <dir>/build.toml (problems go to `sink`), plans, builds and assembles each variant.
// Fails naming what to install when python, torch, cmake, ninja or a C++ compiler is
// missing, and when nothing at all can be built here.
util::Expected<BuildResult> build_kernel(const std::filesystem::path& dir,
                                         const BuildOptions& options, CommandRunner& runner,
                                         util::DiagnosticSink& sink);

// The cmake configure and build commands of one arch variant (for tests and --dry-run; reads
// only CCACHE_BASEDIR from the environment). With `use_ccache`, ccache is the compilers'
// launcher and, unless CCACHE_BASEDIR is set, ninja runs with `kernel_dir` as ccache's
// base_dir (objects shared between copies of one kernel).
std::vector<Command> cmake_commands(const std::filesystem::path& project_dir,
                                    const std::filesystem::path& build_tree,
                                    const std::string& python, bool use_ccache,
                                    const std::filesystem::path& kernel_dir = {});

}  // namespace kernelhub::builder
