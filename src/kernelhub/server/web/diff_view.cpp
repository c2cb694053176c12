// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/diff_view.hpp>

#include <fmt/format.h>

#include <kernelhub/server/web/html.hpp>

namespace kernelhub::server::web {

namespace {

// A file's header runs from its `diff --git` line to its first hunk; inside a hunk the first
// character says what a line is. Reading the header this way keeps an added line that starts
// with "++" from passing for a "+++ b/..." header.
std::string_view line_class(std::string_view line, bool& in_header) {
  if (line.starts_with("diff --git ")) {
    in_header = true;
    return "file";
  }
  if (line.starts_with("@@")) {
    in_header = false;
    return "hunk";
  }
  if (in_header || line.empty()) {
    return "meta";
  }
  switch (line.front()) {
    case '+': return "add";
    case '-': return "del";
    case ' ': return "ctx";
    default: return "meta";  // "\ No newline at end of file", the cut notice
  }
}

}  // namespace

std::string diff_html(std::string_view patch) {
  std::string html = "<h2 id=\"diff-title\">Diff</h2>\n";
  if (patch.empty()) {
    return html + "<p class=\"muted\" id=\"diff\">No file changed.</p>\n";
  }
  html += "<pre class=\"diff\" id=\"diff\">";
  bool in_header = false;
  std::size_t start = 0;
  while (start < patch.size()) {
    auto end = patch.find('\n', start);
    if (end == std::string_view::npos) {
      end = patch.size();
    }
    const std::string_view line = patch.substr(start, end - start);
    html += fmt::format("<span class=\"{}\">{}</span>\n", line_class(line, in_header), escape(line));
    start = end + 1;
  }
  return html + "</pre>\n";
}

}  // namespace kernelhub::server::web
