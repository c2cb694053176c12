// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/util/diagnostic.hpp>

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace kernelhub::util {

void DiagnosticSink::error(SourceLocation location, std::string message, std::string hint) {
  report(Diagnostic{Severity::error, std::move(location), std::move(message), std::move(hint), {}});
}

void DiagnosticSink::warning(SourceLocation location, std::string message, std::string hint) {
  report(
      Diagnostic{Severity::warning, std::move(location), std::move(message), std::move(hint), {}});
}

void DiagnosticCollector::report(Diagnostic diagnostic) {
  m_diagnostics.push_back(std::move(diagnostic));
}

bool DiagnosticCollector::has_errors() const {
  return std::any_of(m_diagnostics.begin(), m_diagnostics.end(),
                     [](const Diagnostic& d) { return d.severity == Severity::error; });
}

std::vector<Diagnostic> DiagnosticCollector::sorted() const {
  auto result = m_diagnostics;
  auto key = [](const Diagnostic& d) {
    return std::tie(d.location.file, d.location.line, d.location.column, d.message);
  };
  std::stable_sort(result.begin(), result.end(),
                   [&](const Diagnostic& a, const Diagnostic& b) { return key(a) < key(b); });
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

std::string_view line_of(std::string_view text, std::uint32_t line) {
  if (line == 0) {
    return {};
  }
  std::size_t start = 0;
  for (std::uint32_t current = 1; current < line; ++current) {
    auto newline = text.find('\n', start);
    if (newline == std::string_view::npos) {
      return {};
    }
    start = newline + 1;
  }
  auto end = text.find('\n', start);
  auto result = text.substr(start, end == std::string_view::npos ? text.size() - start : end - start);
  if (!result.empty() && result.back() == '\r') {
    result.remove_suffix(1);
  }
  return result;
}

std::string_view to_string(Severity severity) {
  switch (severity) {
    case Severity::error:
      return "error";
    case Severity::warning:
      return "warning";
    case Severity::note:
      return "note";
  }
  return "error";
}

std::string render(const Diagnostic& d) {
  std::string out;
  const auto& loc = d.location;
  if (!loc.file.empty()) {
    out += loc.file;
    if (loc.line > 0) {
      out += fmt::format(":{}", loc.line);
      if (loc.column > 0) {
        out += fmt::format(":{}", loc.column);
      }
    }
    out += ": ";
  }
  out += fmt::format("{}: {}\n", to_string(d.severity), d.message);
  if (!d.source_line.empty() && loc.line > 0) {
    auto gutter = fmt::format("{}", loc.line);
    out += fmt::format(" {} | {}\n", gutter, d.source_line);
    if (loc.column > 0) {
      // Tabs in the source line are kept so the caret lines up in a terminal.
      std::string pad;
      for (std::size_t i = 0; i + 1 < loc.column && i < d.source_line.size(); ++i) {
        pad += d.source_line[i] == '\t' ? '\t' : ' ';
      }
      out += fmt::format(" {} | {}^\n", std::string(gutter.size(), ' '), pad);
    }
  }
  if (!d.hint.empty()) {
    out += fmt::format("  hint: {}\n", d.hint);
  }
  return out;
}

std::string render_hints_once(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  std::set<std::string> shown;
  for (auto diagnostic : diagnostics) {
    if (!diagnostic.hint.empty() && !shown.insert(diagnostic.hint).second) {
      diagnostic.hint.clear();
    }
    out += render(diagnostic);
  }
  return out;
}

}  // namespace kernelhub::util
