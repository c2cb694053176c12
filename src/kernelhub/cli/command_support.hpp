// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include <fmt/format.h>

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

}  // namespace kernelhub::cli
