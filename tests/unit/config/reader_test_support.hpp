// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/util/diagnostic.hpp>

// Shared by the config reader tests: read inline TOML and look at what was reported.
namespace kernelhub::util {

// Readable gtest failures for locations.
inline void PrintTo(const SourceLocation& location, std::ostream* out) {
  *out << location.file << ":" << location.line << ":" << location.column;
}

}  // namespace kernelhub::util

namespace kernelhub::config::testing {

struct ReadOutcome {
  std::optional<LoadedBuildConfig> loaded;
  std::vector<util::Diagnostic> diagnostics;  // sorted

  std::vector<util::Diagnostic> of(util::Severity severity) const {
    std::vector<util::Diagnostic> out;
    for (const auto& d : diagnostics) {
      if (d.severity == severity) {
        out.push_back(d);
      }
    }
    return out;
  }
  std::vector<util::Diagnostic> errors() const { return of(util::Severity::error); }
  std::vector<util::Diagnostic> warnings() const { return of(util::Severity::warning); }
};

inline ReadOutcome read_toml(std::string_view text) {
  util::DiagnosticCollector sink;
  auto loaded = read_build_config(text, "build.toml", sink);
  return {std::move(loaded), sink.sorted()};
}

// The six [general] lines every edition-5 test file starts with (lines 1-6).
inline constexpr std::string_view k_general5 =
    "[general]\n"
    "name = \"relu\"\n"
    "version = 1\n"
    "edition = 5\n"
    "license = \"Apache-2.0\"\n"
    "backends = [\"cuda\"]\n";

inline constexpr std::string_view k_torch = "[torch]\nsrc = [\"a.cpp\"]\n";

// The config of an inline build.toml that must parse (the test fails where it does not).
inline BuildConfig parse_config(std::string_view text) {
  util::DiagnosticCollector sink;
  auto inspection = inspect_build_config(text, "build.toml", sink);
  EXPECT_TRUE(inspection.loaded.has_value()) << "build.toml did not parse";
  return inspection.loaded ? inspection.loaded->config : BuildConfig{};
}

}  // namespace kernelhub::config::testing
