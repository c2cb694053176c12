// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <kernelhub/config/build_config.hpp>
#include <kernelhub/util/diagnostic.hpp>
#include <kernelhub/util/expected.hpp>

// Reads build.toml of any edition into the edition-5 model (builder.md §2).
//
// - `general.edition = 5` is read as edition 5; any other edition is refused.
// - Without an `edition` key the file is tried as edition 4, 3, 2 and 1, in that order; the
//   first that fits wins (else the one with the fewest errors, and its errors are reported).
//   It is upgraded in memory with a warning that names `kernel-builder update-build`. Unlike
//   the reference, which only upgrades edition 4, editions 1-3 are accepted too.
// - Every problem is reported to the sink, located at its key or value with the source line:
//   syntax errors, types, unknown keys (with "did you mean"), names, versions, URLs, backends,
//   dependencies, python-depends against the allow-list. Reading never stops at the first.
namespace kernelhub::config {

// Returns the config, or nullopt when at least one error was reported. `file_name` is used in
// diagnostics as given ("build.toml", or a path).
std::optional<LoadedBuildConfig> read_build_config(std::string_view text, std::string file_name,
                                                   util::DiagnosticSink& sink);

// What a read found, for tools that report on invalid files too (check-config --json).
struct BuildConfigInspection {
  std::optional<LoadedBuildConfig> loaded;  // set when there were no errors
  // The edition the file was read as: its `edition`, or the legacy edition that fitted best.
  // Unset when the TOML did not parse or the edition is not supported.
  std::optional<int> edition;
};

BuildConfigInspection inspect_build_config(std::string_view text, std::string file_name,
                                           util::DiagnosticSink& sink);

// Reads <kernel_dir>/build.toml. The error value is for an unreadable file or, when the file
// has problems, a one-line summary (the problems themselves went to `sink`).
util::Expected<LoadedBuildConfig> load_build_config(const std::filesystem::path& kernel_dir,
                                                    util::DiagnosticSink& sink);

}  // namespace kernelhub::config
