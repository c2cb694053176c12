// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <kernelhub/builder/command_runner.hpp>
#include <kernelhub/hub/endpoint.hpp>
#include <kernelhub/util/expected.hpp>
#include <kernelhub/variants/release_version.hpp>

// One cached Python environment per torch release, for `build --torch 2.14,2.15`:
// <root>/<major.minor>/ is a venv of the active Python holding `torch==<major.minor>.*`.
//
// The torch wheels on PyPI are CUDA builds whose CUDA libraries come as separate nvidia-*
// wheels (about 3 GB). When the active Python already has them (its torch is a CUDA build),
// the environment installs torch alone (--no-deps, about 560 MB for 2.14) plus the small
// pure-Python packages `import torch` needs, and links the active environment's nvidia/
// folder in: torch finds its CUDA libraries there, and libraries of one CUDA major are
// backward compatible. If that torch still cannot be imported (a different CUDA major), the
// environment falls back to a full `pip install torch==<version>.*`.
//
// The packages go in through uv when it is found (beside the active Python, as in a venv that
// installed it, else on PATH; KERNELHUB_NO_UV=1 says not to look): uv links the files from its
// cache, where pip unpacks the 560 MB wheel for every environment it makes. pip's index
// settings from the environment (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS) are passed
// on; a step uv cannot do (an index only pip.conf names, say) is done again with pip.
namespace kernelhub::builder {

// $XDG_CACHE_HOME/kernelhub/torch-envs, else ~/.cache/kernelhub/torch-envs.
std::filesystem::path torch_envs_root();

struct TorchEnvLayout {
  std::filesystem::path dir;     // <root>/<major.minor>
  std::filesystem::path python;  // <dir>/bin/python
  std::filesystem::path ready;   // <dir>/.kernelhub-ready: written last, so a half-made
                                 // environment (an interrupted install) is made again
  std::filesystem::path lock;    // <root>/<major.minor>.lock
};

TorchEnvLayout torch_env_layout(const std::filesystem::path& root,
                                const variants::ReleaseVersion& torch);

// The pip requirement that selects a release: "torch==2.14.*".
std::string torch_requirement(const variants::ReleaseVersion& torch);

// Who installs the packages: pip of the environment, or uv (`uv`: its path) for it.
struct TorchEnvInstaller {
  std::optional<std::filesystem::path> uv;
  bool show_progress = false;
  // pip's index settings (PIP_INDEX_URL and the like), given to uv as its options.
  hub::EnvLookup env;

  // The environment's pip, with the same progress display: what a step uv fails falls back to.
  TorchEnvInstaller with_pip() const { return {std::nullopt, show_progress, {}}; }
};

// The commands that make the lean environment with `base_python` (pure, for tests): create
// the venv, install torch without dependencies, install what `import torch` needs.
std::vector<Command> lean_torch_env_commands(const TorchEnvLayout& layout,
                                             const std::filesystem::path& base_python,
                                             const variants::ReleaseVersion& torch,
                                             const TorchEnvInstaller& installer);

// uv beside `base_python` (not following its links: a venv's bin/), else on PATH; none when
// KERNELHUB_NO_UV is set.
std::optional<std::filesystem::path> find_uv(const std::filesystem::path& base_python,
                                             CommandRunner& runner);

// Returns the Python of the environment for `torch`, making it first when it is missing or
// half-made. Holds an exclusive lock on layout.lock meanwhile, so two builds never install
// into one environment at once. Progress goes to stderr; pip's progress bars show when stderr
// is a terminal. Errors name the failing step and what to check.
util::Expected<std::filesystem::path> ensure_torch_env(const std::filesystem::path& root,
                                                       const variants::ReleaseVersion& torch,
                                                       const std::filesystem::path& base_python,
                                                       CommandRunner& runner);

}  // namespace kernelhub::builder
