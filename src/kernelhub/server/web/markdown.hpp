// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <kernelhub/server/web/markdown_budget.hpp>

namespace kernelhub::server::web {

// Where a card's relative links point: `links` + "/" + target for links (the file page),
// `images` + "/" + target for images (the raw file), both already URL paths. Absolute URLs,
// site paths (`/x`) and fragments (`#x`) are left as written.
struct LinkBases {
  std::string links;
  std::string images;
};

// The bounds on one rendering (issue 20 item 1): past any of them the text is not rendered
// and the result says why. Every bound holds for any input; the defaults leave room for any
// card a person writes (a 1 MiB README renders in tens of milliseconds and a few MiB).
struct MarkdownLimits {
  std::size_t max_input_bytes = std::size_t{1} << 20;
  // Tables (markdown_shape.hpp): columns of one, and cells of all, padded rows included.
  std::size_t max_table_columns = 1000;
  std::uint64_t max_table_cells = 200000;
  // Lines times the nesting open over them (markdown_shape.hpp).
  std::uint64_t max_nesting_work = 50000000;
  std::size_t max_output_bytes = std::size_t{8} << 20;
  // What cmark-gfm may hold at once, and the CPU time of the rendering thread.
  BudgetLimits budget;
};

// A rendering, or the reason there is none.
struct RenderedMarkdown {
  std::string html;     // empty when refused
  std::string refusal;  // empty when rendered; else why not, as a phrase ("it has ...")
  std::size_t peak_bytes = 0;  // the most cmark-gfm held at once
};

// A Markdown text (a card, a file, a comment) as HTML, through cmark-gfm with the GitHub
// extensions (tables, autolinks, strikethrough, task lists). The text is untrusted: raw HTML
// is left out (cmark-gfm's safe mode, the default since 0.29) and `javascript:` and other
// unsafe URLs are dropped, so no text can put a script or an event handler on the page. A
// leading YAML front matter block (`---` ... `---`, the Hub's card metadata) is not shown.
// Bounded by `limits` in input, table size, nesting, memory, CPU time and output.
RenderedMarkdown render_markdown(std::string_view markdown, const LinkBases& bases,
                                 const MarkdownLimits& limits = {});

// render_markdown with the default limits for pages: each result is kept (per text and link
// bases, a few tens of MiB in all) so a page rendered once costs a hash the next time, and at
// most four renderings run at once, so concurrent requests hold at most four budgets.
std::shared_ptr<const RenderedMarkdown> page_markdown(std::string_view markdown,
                                                      const LinkBases& bases);

// The Markdown texts of one page (a discussion's comments): page_markdown's HTML for each, or
// when it was refused a notice saying why and the text itself, escaped, in a <pre>. Once the
// page has rendered 1 MiB of text or spent 2 s of CPU on renderings (kept ones cost nothing),
// the rest are shown as text too, so a page of many texts is bounded as one text is.
class PageMarkdown {
 public:
  std::string html(std::string_view markdown, const LinkBases& bases);

 private:
  std::size_t m_bytes = 0;
  std::chrono::nanoseconds m_cpu{0};
};

// The card without its front matter, and the front matter's `license:` value ("" when none).
std::string_view strip_front_matter(std::string_view markdown);
std::string front_matter_license(std::string_view markdown);

}  // namespace kernelhub::server::web
