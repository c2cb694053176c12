// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/cli/command.hpp>

#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/util/diagnostic.hpp>
#include <kernelhub/util/expected.hpp>
#include <kernelhub/util/fatal_error.hpp>

namespace CLI {
class App;
class Option;
}  // namespace CLI

// Small helpers every subcommand file uses to turn library results into the CLI's one
// exception type, so each command reports the same failure in the same words.
namespace kernelhub::cli {

// The value of `result`, or a util::FatalError carrying its message.
template <typename T>
T value_or_fatal(util::Expected<T> result) {
  if (!result) {
    throw util::FatalError(result.error().message);
  }
  return std::move(*result);
}

// Throws `"<dir>" is not a directory` unless `dir` names an existing directory.
inline void require_directory(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw util::FatalError(fmt::format("\"{}\" is not a directory", dir));
  }
}

// The build.toml of the kernel in `dir`: its diagnostics rendered on stderr, a fatal error when
// it does not load.
inline config::BuildConfig load_config_or_fatal(const std::filesystem::path& dir) {
  require_directory(dir.string());
  util::DiagnosticCollector diagnostics;
  auto loaded = config::load_build_config(dir, diagnostics);
  for (const auto& diagnostic : diagnostics.sorted()) {
    std::fputs(util::render(diagnostic).c_str(), stderr);
  }
  if (!loaded) {
    throw util::FatalError(loaded.error().message);
  }
  return std::move(loaded->config);
}

// `--version N | --revision R` of the commands that name a Hub kernel's revision (download,
// verify, verify-signature): one declaration, so each parses, excludes and describes them alike.
struct RevisionOptions {
  std::optional<unsigned> version;      // set by collect() when --version was given
  std::optional<std::string> revision;  // set by collect() when --revision was given
  unsigned version_value = 0;           // what CLI11 parses into
  std::string revision_value;
  CLI::Option* version_option = nullptr;
  CLI::Option* revision_option = nullptr;

  // Copies the parsed values into `version` and `revision`; call it from the callback.
  void collect();
  bool given() const { return version.has_value() || revision.has_value(); }
};

inline constexpr std::string_view k_version_help =
    "the kernel version (the v<N> branch) of a Hub kernel";
inline constexpr std::string_view k_revision_help =
    "a branch, tag or commit of a Hub kernel instead of a version";

// Declares --version and --revision (mutually exclusive) on `sub`, parsed into `options`.
void add_revision_options(CLI::App& sub, RevisionOptions& options,
                          std::string_view version_help = k_version_help,
                          std::string_view revision_help = k_revision_help);

// The end of a command that checks variants (verify, verify-signature): `out` gets "ok", is
// printed with --json, and the exit status is 1 when a check failed.
void finish_verdict(nlohmann::ordered_json& out, bool failed, bool json, RunState& state);

// verify's and verify-signature's lines for what a variant holds outside its digest
// (metadata::VariantFiles::uncovered), one a line: "not covered by the digest: PATH (why)".
std::string uncovered_text(const std::vector<std::string>& uncovered);

}  // namespace kernelhub::cli
