// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/builder/command_runner.hpp>
#include <kernelhub/util/expected.hpp>

// The build sandbox (issue 24 §2): a kernel's build steps (cmake's configure, which runs the
// kernel's CMake code, and ninja, which runs the compilers) run under bubblewrap with no
// network, a private /tmp and HOME, the system (/usr, /etc, /bin, /lib*, /sbin) read-only, and
// beyond it only the build's declared inputs (sandbox_inputs.hpp): the kernel's folder
// read-only, its build tree and the compiler cache writable, the toolchain and the Python
// environment read-only. Probes of the environment (torch, nvcc, ccache) run outside it: they
// are kernel-builder's own scripts, not the kernel's.
namespace kernelhub::builder {

// Whether a build's steps run in the sandbox (`--no-sandbox`: off).
enum class Sandboxing { on, off };

// What a sandboxed step may see besides the system, each at its own path.
struct SandboxMounts {
  std::vector<std::filesystem::path> read_only;
  std::vector<std::filesystem::path> writable;
  // A fresh tmpfs here, the step's HOME; empty: HOME is left as it is.
  std::filesystem::path home;
};

// The system folders every step sees read-only (those that exist).
const std::vector<std::filesystem::path>& sandbox_system_paths();

// `command` run under `bwrap` with `mounts` (a pure function): new user, pid, ipc, uts, cgroup
// and network namespaces (only a loopback of its own), killed with kernel-builder, TMPDIR=/tmp.
// Mounts nested in another of the same kind are dropped; writable ones come last, so a build
// tree inside the read-only kernel folder stays writable.
Command sandboxed_command(const Command& command, const std::filesystem::path& bwrap,
                          const SandboxMounts& mounts);

// bwrap from PATH, once it has run `true` in a sandbox like a build step's. Fails naming why
// (not installed, or it cannot create namespaces here) and pointing at --no-sandbox.
util::Expected<std::filesystem::path> find_sandbox(CommandRunner& runner);

// Whether `path` (absolute, normalised) is visible inside a sandbox with `mounts`.
bool visible_in_sandbox(const std::filesystem::path& path, const SandboxMounts& mounts);

// What a step that failed in the sandbox tried that the sandbox forbids, from its output: a
// network access (a connection or name-lookup error, with the URLs the output names), or
// files outside the declared inputs (absolute paths named in the output that `exists` outside
// but are not visible inside). nullopt when the output shows neither: the failure is then the
// build's own.
std::optional<std::string> explain_sandbox_failure(
    std::string_view output, const SandboxMounts& mounts,
    const std::function<bool(const std::filesystem::path&)>& exists);

}  // namespace kernelhub::builder
