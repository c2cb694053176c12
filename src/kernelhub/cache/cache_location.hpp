// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <kernelhub/hub/endpoint.hpp>

// Where the huggingface_hub cache lives, read from the environment the way huggingface_hub
// 2.4 (`constants.py`) and kernels (`hf_hub.py`) read it, so both tools open the same folders
// (hub-api.md §5.1, loader.md §1.3).
namespace kernelhub::cache {

// The environment seam is the hub layer's (hub::process_environment() in production). An
// empty value counts as unset, as Python's `os.environ.get(...) or default` treats it.
using hub::EnvLookup;

// Python's `os.path.expandvars(os.path.expanduser(raw))`: a leading "~" or "~user", then
// "$NAME" and "${NAME}" of set variables (unset ones stay as written).
std::string expand_path(std::string_view raw, const EnvLookup& env);

// $HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface.
std::filesystem::path hf_home(const EnvLookup& env);

// $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE, else <hf_home>/hub.
std::filesystem::path hub_cache_dir(const EnvLookup& env);

// The cache kernels downloads into: $KERNELS_CACHE (taken verbatim, as kernels passes it as
// `cache_dir`), else hub_cache_dir.
std::filesystem::path kernels_cache_dir(const EnvLookup& env);

}  // namespace kernelhub::cache
