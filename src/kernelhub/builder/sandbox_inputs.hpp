// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/builder/command_runner.hpp>
#include <kernelhub/builder/sandbox.hpp>
#include <kernelhub/config/build_config.hpp>
#include <kernelhub/util/expected.hpp>

// What a sandboxed build declares as its inputs (sandbox.hpp), found outside the sandbox:
// the folders of the programs it runs, the Python environment torch is imported from, and
// the compiler cache, so that a build in the sandbox is exactly as fast as one outside it.
namespace kernelhub::builder {

// The install root of a program: for ".../bin/tool" the folder holding bin/, else the
// program's folder; for its resolved path too, and for a script's "#!" interpreter. Roots
// under the system folders are left out (the sandbox shows those anyway).
std::vector<std::filesystem::path> program_roots(const std::filesystem::path& program);

// What ccache needs, from `ccache -p` ("(origin) key = value" lines): its cache_dir and
// temporary_dir writable, the config files that set anything read-only (ccache finds them at
// the same paths inside, HOME included).
struct CcacheFolders {
  std::vector<std::filesystem::path> writable;
  std::vector<std::filesystem::path> config_files;
};
CcacheFolders parse_ccache_config(std::string_view text);

// The Python program that prints, as one JSON array, the folders an interpreter loads from:
// its prefixes and every absolute sys.path entry (a venv over another one included).
std::string_view python_paths_script();
std::vector<std::filesystem::path> parse_python_paths(std::string_view json_text);

// The mounts every step of one build shares: the programs' roots (cmake, ninja, ccache, the
// compilers, CC/CXX/CUDACXX and CMAKE_TOOLCHAIN_FILE from the environment), ccache's folders,
// the folders `extra_writable` (created first) and a private HOME. A program not found is
// skipped: the build itself reports it.
SandboxMounts shared_sandbox_mounts(CommandRunner& runner,
                                    const std::vector<std::filesystem::path>& extra_writable);

// The CUDA toolkit an nvcc belongs to, as named and as resolved.
std::vector<std::filesystem::path> toolkit_roots(const std::filesystem::path& nvcc);

// The folders of the kernel's declared sources and include folders that lie outside
// `kernel_dir` ("../common/x.cu", or a source that is a link out of it), read-only.
std::vector<std::filesystem::path> declared_outside_folders(
    const config::BuildConfig& config, const std::filesystem::path& kernel_dir);

// The sandbox of one build target: bwrap and what its steps share (the Python environment's
// folders included); a variant's steps add the kernel folder and their build tree.
struct StepSandbox {
  std::filesystem::path bwrap;
  SandboxMounts mounts;
};

// `sandbox` for the steps of one variant: `kernel_dir` read-only, `work` (its build folder)
// writable, plus `read_only` (a CUDA toolkit).
StepSandbox variant_sandbox(const StepSandbox& sandbox, const std::filesystem::path& kernel_dir,
                            const std::filesystem::path& work,
                            const std::vector<std::filesystem::path>& read_only = {});

// The file a build tree holds when its last build ran without the sandbox: a sandboxed build
// then starts it afresh, so no object compiled outside the sandbox is reused by one recorded
// as sandboxed.
inline constexpr const char* k_unsandboxed_stamp = "kernelhub-unsandboxed";
util::Expected<void> prepare_build_tree(const std::filesystem::path& build_tree, bool sandboxed);

// Prints "kernel-builder: building <variant>" and runs `commands` in order, under `sandbox`
// when given. A failed step fails naming it and the variant and, in the sandbox, what it
// tried that the sandbox forbids (explain_sandbox_failure).
util::Expected<void> run_build_steps(const std::vector<Command>& commands,
                                     const std::string& variant,
                                     const std::optional<StepSandbox>& sandbox,
                                     CommandRunner& runner);

}  // namespace kernelhub::builder
