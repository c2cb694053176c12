// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the Markdown renderer of the web pages (issue 20 item 1): a card, a
// file or a comment, as web::render_markdown renders it for a page (cmark-gfm with the GitHub
// extensions, under the input, table, nesting, memory, CPU and output bounds), and the
// pre-parse measure it decides with (web::measure_markdown). Any input must give HTML or a
// refusal with a reason, never a crash, an abort of cmark-gfm (an allocation it cannot get),
// an out-of-bounds access in our code (ASan) or undefined behaviour (UBSan); what is
// rendered is checked against the renderer's contract: within the output and memory bounds,
// no raw HTML tag and no script URL from the text. cmark-gfm itself is Debian's shared
// library, not instrumented: coverage guides through our code and its callbacks only.
// Commands: fuzz/README.md.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <string>
#include <string_view>

#include <kernelhub/server/web/markdown.hpp>
#include <kernelhub/server/web/markdown_shape.hpp>

namespace {

using namespace kernelhub::server::web;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The tags and attributes cmark-gfm's HTML renderer writes; with raw HTML omitted (safe
// mode), anything else came from the text.
constexpr std::string_view k_tags[] = {
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "a", "img", "code", "pre",
    "blockquote", "ul", "ol", "li", "hr", "br", "table", "thead", "tbody", "tr", "th", "td",
    "del", "input"};
constexpr std::string_view k_attributes[] = {"href", "src", "alt", "title", "start", "align",
                                             "type", "checked", "disabled", "lang"};

template <std::size_t N>
bool listed(const std::string_view (&list)[N], std::string_view name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

// Whether one tag (`<...>`, lower-cased) is one cmark-gfm writes, with only its attributes
// and no script URL.
bool safe_tag(std::string_view tag) {
  if (tag.starts_with("<!--")) {
    return tag == "<!-- raw html omitted -->";
  }
  std::size_t at = tag[1] == '/' ? 2 : 1;
  const std::size_t name_end = tag.find_first_of(" />", at);
  if (!listed(k_tags, tag.substr(at, name_end - at))) {
    return false;
  }
  at = name_end;
  while (at < tag.size()) {
    at = tag.find_first_not_of(" /", at);
    if (at == std::string_view::npos || tag[at] == '>') {
      return true;
    }
    const std::size_t eq = tag.find_first_of("= />", at);
    const std::string_view attribute = tag.substr(at, eq - at);
    if (!listed(k_attributes, attribute)) {
      return false;
    }
    if (eq == std::string_view::npos || tag[eq] != '=') {
      at = eq;
      continue;
    }
    if (tag[eq + 1] != '"') {
      return false;
    }
    const std::size_t close = tag.find('"', eq + 2);
    if (close == std::string_view::npos) {
      return false;
    }
    const std::string_view value = tag.substr(eq + 2, close - eq - 2);
    for (const std::string_view scheme : {"javascript:", "vbscript:", "file:", "data:text"}) {
      if ((attribute == "href" || attribute == "src") && value.starts_with(scheme)) {
        return false;
      }
    }
    at = close + 1;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const LinkBases bases{"/kernels/org/k/blob/main/docs", "/kernels/org/k/resolve/main/docs"};
  // Tighter than a page's bounds so a run tries more inputs; the same code decides.
  MarkdownLimits limits;
  limits.budget.max_bytes = std::size_t{16} << 20;
  limits.budget.max_cpu = std::chrono::milliseconds(250);
  limits.max_output_bytes = std::size_t{4} << 20;

  const MarkdownShape shape = measure_markdown(text);
  if (shape.widest_table > text.size() + 1) {
    std::abort();  // a table's columns come from the text's `|`
  }
  const RenderedMarkdown result = render_markdown(text, bases, limits);
  if (!result.html.empty() && !result.refusal.empty()) {
    std::abort();  // rendered or refused, never both
  }
  if (result.html.size() > limits.max_output_bytes ||
      result.peak_bytes > limits.budget.max_bytes) {
    std::abort();
  }
  // Text never carries a raw `<` (it is escaped), so every `<` opens a tag cmark-gfm wrote.
  const std::string html = lower(result.html);
  std::size_t open = html.find('<');
  while (open != std::string::npos) {
    const std::size_t close = html.find('>', open);
    if (close == std::string::npos || !safe_tag(std::string_view(html).substr(open, close - open + 1))) {
      std::abort();
    }
    open = html.find('<', close);
  }
  return 0;
}
