// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/checks/native_op_registration_check.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace kernelhub::checks {

namespace {

constexpr std::array<std::string_view, 12> k_native_extensions = {
    ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".cu", ".cuh", ".hip", ".mm", ".m"};

constexpr std::string_view k_extension_name = "TORCH_EXTENSION_NAME";

bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool is_ident(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

// `source` with comments and `#define` lines blanked and the contents of string and character
// literals replaced by a non-identifier byte; newlines and offsets are kept, so an offset in
// the result is the same offset in `source`.
std::string code_only(std::string_view source) {
  std::string code(source);
  const auto n = source.size();
  std::size_t i = 0;
  bool line_start = true;  // only whitespace since the last newline
  auto blank = [&](std::size_t from, std::size_t to, char fill) {
    for (auto k = from; k < to && k < n; ++k) {
      if (code[k] != '\n') {
        code[k] = fill;
      }
    }
  };
  while (i < n) {
    const char c = source[i];
    if (c == '\n') {
      line_start = true;
      ++i;
      continue;
    }
    if (line_start && c == '#') {
      // A directive runs to the end of the line, with backslash continuations.
      auto end = i;
      while (end < n && !(source[end] == '\n' && (end == 0 || source[end - 1] != '\\'))) {
        ++end;
      }
      auto word = i + 1;
      while (word < end && (source[word] == ' ' || source[word] == '\t')) {
        ++word;
      }
      if (source.substr(word, 6) == "define") {
        blank(i, end, ' ');
      }
      i = end;
      continue;
    }
    if (c != ' ' && c != '\t' && c != '\r') {
      line_start = false;
    }
    if (c == '/' && i + 1 < n && source[i + 1] == '/') {
      auto end = source.find('\n', i);
      end = end == std::string_view::npos ? n : end;
      blank(i, end, ' ');
      i = end;
    } else if (c == '/' && i + 1 < n && source[i + 1] == '*') {
      auto end = source.find("*/", i + 2);
      end = end == std::string_view::npos ? n : end + 2;
      blank(i, end, ' ');
      i = end;
    } else if (c == 'R' && i + 1 < n && source[i + 1] == '"' &&
               (i == 0 || !is_ident(source[i - 1]) || source[i - 1] == '8' ||
                source[i - 1] == 'u' || source[i - 1] == 'U' || source[i - 1] == 'L')) {
      const auto open = source.find('(', i + 2);
      if (open == std::string_view::npos) {
        break;
      }
      const auto close_marker =
          ")" + std::string(source.substr(i + 2, open - i - 2)) + "\"";
      auto end = source.find(close_marker, open);
      end = end == std::string_view::npos ? n : end + close_marker.size();
      blank(i + 2, end - 1, '\x01');
      i = end;
    } else if (c == '\'' && i > 0 && is_ident(source[i - 1])) {
      ++i;  // a digit separator (1'000), or the end of a prefix such as u8'x'
    } else if (c == '"' || c == '\'') {
      auto k = i + 1;
      while (k < n && source[k] != c && source[k] != '\n') {
        k += source[k] == '\\' ? 2 : 1;
      }
      blank(i + 1, k, '\x01');
      i = k + 1;
    } else {
      ++i;
    }
  }
  return code;
}

class RegistrationScanner {
 public:
  RegistrationScanner(std::string_view file, std::string_view source, util::DiagnosticSink& sink)
      : m_file(file), m_source(source), m_code(code_only(source)), m_sink(sink) {
    m_line_starts.push_back(0);
    for (std::size_t i = 0; i < source.size(); ++i) {
      if (source[i] == '\n') {
        m_line_starts.push_back(i + 1);
      }
    }
  }

  void run() {
    for (std::size_t i = 0; i < m_code.size();) {
      if (!is_ident_start(m_code[i]) || (i > 0 && is_ident(m_code[i - 1]))) {
        ++i;
        continue;
      }
      auto end = i;
      while (end < m_code.size() && is_ident(m_code[end])) {
        ++end;
      }
      const auto word = std::string_view(m_code).substr(i, end - i);
      check_macro(word, i, end);
      if (word == "def" || word == "impl") {
        check_schema(word, i, end);
      }
      i = end;
    }
  }

 private:
  std::size_t skip_space(std::size_t i) const {
    while (i < m_code.size() && (m_code[i] == ' ' || m_code[i] == '\t' || m_code[i] == '\n' ||
                                 m_code[i] == '\r')) {
      ++i;
    }
    return i;
  }

  // The macro arguments at `open` (a '('), split at top-level commas, trimmed.
  std::vector<std::string> arguments(std::size_t open) const {
    std::vector<std::string> out(1);
    int depth = 0;
    for (auto i = open + 1; i < m_code.size(); ++i) {
      const char c = m_code[i];
      if (c == '(') {
        ++depth;
      } else if (c == ')') {
        if (depth == 0) {
          break;
        }
        --depth;
      } else if (c == ',' && depth == 0) {
        out.emplace_back();
        continue;
      }
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
        out.back() += c;
      }
    }
    return out;
  }

  void check_macro(std::string_view word, std::size_t start, std::size_t end) {
    auto name = word;
    if (name.starts_with("STABLE_")) {
      name.remove_prefix(7);
    }
    const bool expand = name.ends_with("_EXPAND");
    if (expand) {
      name.remove_suffix(7);
    }
    const bool impl = name == "TORCH_LIBRARY_IMPL";
    if (name != "TORCH_LIBRARY" && name != "TORCH_LIBRARY_FRAGMENT" && !impl) {
      return;
    }
    const auto open = skip_space(end);
    if (open >= m_code.size() || m_code[open] != '(') {
      return;
    }
    const auto args = arguments(open);
    const auto& ns = args[0];
    if (ns.empty() || (impl && ns == "aten") || (expand && ns == k_extension_name)) {
      return;
    }
    const std::string_view stable = word.starts_with("STABLE_") ? "STABLE_" : "";
    const auto fixed = impl ? fmt::format("{}TORCH_LIBRARY_IMPL_EXPAND({}, {}, {})", stable,
                                          k_extension_name, args.size() > 1 ? args[1] : "CPU",
                                          args.size() > 2 ? args[2] : "m")
                            : fmt::format("{}TORCH_LIBRARY_EXPAND({}, {})", stable,
                                          k_extension_name, args.size() > 1 ? args[1] : "m");
    util::Diagnostic diagnostic;
    diagnostic.message =
        !expand && ns == k_extension_name
            ? fmt::format("{} takes its namespace literally: \"{}\" is not expanded", word, ns)
            : fmt::format("{} registers the kernel's ops under the fixed namespace \"{}\"", word,
                          ns);
    // What happens otherwise (issue 22 §7): the kernel loads, and its ops are not where its
    // package calls them.
    diagnostic.hint =
        impl ? fmt::format(
                   "each build has its own namespace; write `{}` (registration.h): these "
                   "implementations go to ops in \"{}\", not to the build's own ops that the "
                   "package calls",
                   fixed, ns)
             : fmt::format(
                   "each build has its own namespace; write `{}` (registration.h): otherwise "
                   "the kernel loads, but its ops land in torch.ops.{} instead of the build's "
                   "namespace that the package's `ops` (from ._ops) refers to, so every "
                   "`ops.<name>` call raises AttributeError",
                   fixed, ns);
    report(start, std::move(diagnostic));
  }

  void check_schema(std::string_view word, std::size_t start, std::size_t end) {
    // A member call: `.def(` or `->def(`.
    auto before = start;
    while (before > 0 && (m_code[before - 1] == ' ' || m_code[before - 1] == '\t' ||
                          m_code[before - 1] == '\n')) {
      --before;
    }
    const bool member = (before >= 1 && m_code[before - 1] == '.') ||
                        (before >= 2 && m_code[before - 1] == '>' && m_code[before - 2] == '-');
    const auto open = skip_space(end);
    if (!member || open >= m_code.size() || m_code[open] != '(') {
      return;
    }
    const auto quote = skip_space(open + 1);
    if (quote >= m_code.size() || m_code[quote] != '"') {
      return;
    }
    const auto close = m_source.find('"', quote + 1);
    if (close == std::string_view::npos) {
      return;
    }
    const auto text = m_source.substr(quote + 1, close - quote - 1);
    auto k = std::size_t{0};
    while (k < text.size() && is_ident(text[k])) {
      ++k;
    }
    if (k == 0 || text.substr(k, 2) != "::") {
      return;
    }
    const auto ns = text.substr(0, k);
    if (word == "impl" && ns == "aten") {
      return;
    }
    const auto rest = text.substr(k + 2);
    util::Diagnostic diagnostic;
    diagnostic.message = fmt::format("the {} \"{}\" names the namespace \"{}\"",
                                     word == "def" ? "schema" : "op name", text, ns);
    diagnostic.hint = fmt::format(
        "write `{}(\"{}\"...)` without \"{}::\": the TORCH_LIBRARY_EXPAND block gives the ops "
        "the build's own namespace",
        word, rest.substr(0, rest.find('(')), ns);
    report(quote, std::move(diagnostic));
  }

  void report(std::size_t offset, util::Diagnostic diagnostic) {
    const auto line = std::upper_bound(m_line_starts.begin(), m_line_starts.end(), offset) -
                      m_line_starts.begin();
    const auto column = offset - m_line_starts[line - 1] + 1;
    diagnostic.location = {std::string(m_file), static_cast<std::uint32_t>(line),
                           static_cast<std::uint32_t>(column)};
    diagnostic.source_line = std::string(util::line_of(m_source, diagnostic.location.line));
    m_sink.report(std::move(diagnostic));
  }

  std::string_view m_file;
  std::string_view m_source;
  std::string m_code;
  util::DiagnosticSink& m_sink;
  std::vector<std::size_t> m_line_starts;
};

}  // namespace

bool is_native_source(std::string_view path) {
  const auto dot = path.rfind('.');
  if (dot == std::string_view::npos || path.find('/', dot) != std::string_view::npos) {
    return false;
  }
  const auto extension = path.substr(dot);
  return std::find(k_native_extensions.begin(), k_native_extensions.end(), extension) !=
         k_native_extensions.end();
}

void check_native_op_registrations(std::string_view file, std::string_view source,
                                   util::DiagnosticSink& sink) {
  RegistrationScanner(file, source, sink).run();
}

}  // namespace kernelhub::checks
