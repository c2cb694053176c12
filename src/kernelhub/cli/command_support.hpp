// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/util/diagnostic.hpp>
#include <kernelhub/util/expected.hpp>
#include <kernelhub/util/fatal_error.hpp>

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

}  // namespace kernelhub::cli
