// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kernelhub::util {

enum class Severity { error, warning, note };

// A position in a text file; line and column are 1-based, 0 means "unknown".
struct SourceLocation {
  std::string file;
  std::uint32_t line = 0;
  std::uint32_t column = 0;

  friend bool operator==(const SourceLocation&, const SourceLocation&) = default;
};

struct Diagnostic {
  Severity severity = Severity::error;
  SourceLocation location;
  std::string message;      // lowercase, no trailing period, offending value quoted
  std::string hint;         // optional: "did you mean ..." or how to fix it
  std::string source_line;  // optional: the line the location points into

  friend bool operator==(const Diagnostic&, const Diagnostic&) = default;
};

// Where validators push problems, so one run reports all of them (vcpkg's DiagnosticContext).
class DiagnosticSink {
 public:
  virtual ~DiagnosticSink() = default;
  virtual void report(Diagnostic diagnostic) = 0;

  void error(SourceLocation location, std::string message, std::string hint = {});
  void warning(SourceLocation location, std::string message, std::string hint = {});
};

// Collects diagnostics; `sorted()` orders them by file, line, column and drops duplicates.
class DiagnosticCollector : public DiagnosticSink {
 public:
  void report(Diagnostic diagnostic) override;

  bool has_errors() const;
  const std::vector<Diagnostic>& all() const { return m_diagnostics; }
  std::vector<Diagnostic> sorted() const;

 private:
  std::vector<Diagnostic> m_diagnostics;
};

// "error", "warning" or "note".
std::string_view to_string(Severity severity);

// Renders one diagnostic the way compilers do:
//   build.toml:12:5: error: unknown backend "cudaa"
//      12 | backends = ["cudaa"]
//         |             ^
//   hint: did you mean "cuda"?
std::string render(const Diagnostic& diagnostic);

// Renders each diagnostic in order, a hint only the first time its text appears: a rule that
// fires on 78 symbols explains its fix once (check-abi's torch stable-ABI hint).
std::string render_hints_once(const std::vector<Diagnostic>& diagnostics);

// Returns line `line` (1-based) of `text` without its newline, or "" if out of range.
std::string_view line_of(std::string_view text, std::uint32_t line);

}  // namespace kernelhub::util
