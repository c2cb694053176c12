// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/types/backend.hpp>
#include <kernelhub/util/expected.hpp>

// What `kernel-builder init` is asked to create: the kernel's names, its folder and its
// backends, resolved from the command line by the reference's rules (builder.md §7), plus
// the checks the reference leaves out.
namespace kernelhub::codegen {

// The names a kernel project derives from its Hub repository "owner/repo".
struct KernelRepoName {
  std::string owner;
  std::string given_repo;    // the repo part as typed, "gelu_and_mul"
  std::string display_name;  // repo with '_' -> '-': the build.toml name, "my-kernel"
  std::string python_name;   // lowercase repo with '-' -> '_': the package, "my_kernel"
  std::string class_name;    // CamelCase of the repo's words: "MyKernel"
  std::string repo_id;       // owner/display_name

  // Errors: not "owner/repo"; an owner that is not a Hub name; a display name that is not a
  // valid kernel name (the reference accepts those and fails later, at build time).
  static util::Expected<KernelRepoName> parse(std::string_view owner_repo);
};

struct InitTarget {
  KernelRepoName name;
  std::filesystem::path directory;  // absolute
};

// Resolves the name and folder from `init [PATH] [--name OWNER/REPO]`, relative to `cwd`:
//   PATH and --name: folder PATH, name from --name;
//   --name only:     folder cwd/<display name>;
//   PATH only:       PATH must read "owner/repo"; folder cwd/<display name>, as the reference.
// Without an owner (no --name and a PATH that is not owner/repo) it fails asking for --name:
// looking the owner up on the Hub (`whoami`) is not implemented.
util::Expected<InitTarget> resolve_init_target(const std::optional<std::string>& path,
                                               const std::optional<std::string>& name,
                                               const std::filesystem::path& cwd);

// `init --backends cpu acme/x`: the option takes every word after it, so the path typed after
// it lands among the backends. With no PATH given, a last value holding a '/' (an OWNER/REPO or
// a folder, never a backend) is removed from `backends` and returned as the path.
std::optional<std::string> take_trailing_path(std::vector<std::string>& backends);

// Backends with init templates: each has a source folder and a [kernel.*] section.
inline constexpr std::array<types::Backend, 5> k_init_backends = {
    types::Backend::cpu, types::Backend::cuda, types::Backend::metal, types::Backend::rocm,
    types::Backend::xpu};

// The backends asked for by `--backends` values: names (case-insensitive) or "all", kept in
// the order given without duplicates; none means the platform default (metal on macOS, cuda
// elsewhere). "all" means the five backends with templates, not the reference's eight: cann,
// neuron and tpu are noarch-only, so listing them in an arch [torch] project would make
// backends that have no kernel to build. Naming one of those alone is an error for the same
// reason.
util::Expected<std::vector<types::Backend>> resolve_init_backends(
    std::span<const std::string> values);

}  // namespace kernelhub::codegen
