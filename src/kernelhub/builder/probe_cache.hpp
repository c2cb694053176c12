// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/builder/command_runner.hpp>

// Importing torch takes one to several seconds, longer than everything else a no-op rebuild
// does. The torch probe's answer only changes when the interpreter or its torch does, so it is
// kept in a cache keyed by what identifies both: the interpreter's path and the location,
// size and mtime of torch's version.py and __init__.py (found without importing torch, which
// costs a plain interpreter start).
namespace kernelhub::builder {

// The identity of the interpreter and of the installed modules named (path, size and mtime
// of their __init__.py, version.py and folder), one fact a line; a missing module is a line
// too. nullopt when the interpreter cannot run.
std::optional<std::string> modules_fingerprint(const std::filesystem::path& python,
                                               const std::vector<std::string>& modules,
                                               CommandRunner& runner);

// modules_fingerprint of torch; nullopt when the interpreter cannot run or has no torch.
std::optional<std::string> torch_fingerprint(const std::filesystem::path& python,
                                             CommandRunner& runner);

// The cache folder: $KERNELHUB_CACHE_DIR/probes, else $XDG_CACHE_HOME/kernelhub/probes, else
// ~/.cache/kernelhub/probes; nullopt when none can be named.
std::optional<std::filesystem::path> probe_cache_dir();

// `script`'s output for `python`, from the cache in `cache_dir` when the fingerprint matches,
// else by running it (and caching a successful answer). No cache_dir: always runs it.
// nullopt when the script fails. `fingerprint`, when given, is a modules_fingerprint of
// `python` that the caller needs anyway (naming torch and more), used as the key instead of
// starting the interpreter for torch_fingerprint; one that says torch is missing means no
// cache.
std::optional<std::string> cached_probe(
    const std::filesystem::path& python, std::string_view script, CommandRunner& runner,
    const std::optional<std::filesystem::path>& cache_dir,
    const std::optional<std::string>& fingerprint = std::nullopt);

}  // namespace kernelhub::builder
