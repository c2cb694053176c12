// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/markdown.hpp>

#include <malloc.h>

#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <semaphore>

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>
#include <fmt/format.h>

#include <kernelhub/server/web/html.hpp>
#include <kernelhub/server/web/markdown_cache.hpp>
#include <kernelhub/server/web/markdown_shape.hpp>
#include <kernelhub/verify/crypto.hpp>

namespace kernelhub::server::web {

namespace {

// CMARK_OPT_SAFE is the default of this cmark-gfm and kept for older ones; VALIDATE_UTF8
// replaces invalid bytes so the page stays valid UTF-8 whatever the card holds.
constexpr int k_options = CMARK_OPT_SAFE | CMARK_OPT_VALIDATE_UTF8 | CMARK_OPT_GITHUB_PRE_LANG;
constexpr const char* k_extensions[] = {"table", "autolink", "strikethrough", "tasklist",
                                        "tagfilter"};
constexpr std::size_t k_trim_after_bytes = std::size_t{8} << 20;

bool is_relative(std::string_view url) {
  if (url.empty() || url.front() == '/' || url.front() == '#' || url.front() == '?') {
    return false;
  }
  // A scheme ("https:", "mailto:") comes before any '/', '?' or '#'.
  const std::size_t colon = url.find(':');
  return colon == std::string_view::npos || url.find_first_of("/?#") < colon;
}

// Relative card links name files of the revision shown; written as is they would resolve
// against the page's own URL, which is not a folder of the repository. Runs inside the budget
// (markdown_budget.hpp), so it holds no C++ object with a destructor: the new URL is built in
// a buffer of the budget's own allocator.
void rebase_links(cmark_node* document, const LinkBases& bases, cmark_mem* memory) {
  cmark_iter* iter = cmark_iter_new(document);
  cmark_event_type event;
  while ((event = cmark_iter_next(iter)) != CMARK_EVENT_DONE) {
    cmark_node* node = cmark_iter_get_node(iter);
    if (event != CMARK_EVENT_ENTER) {
      continue;
    }
    const auto type = cmark_node_get_type(node);
    if (type != CMARK_NODE_LINK && type != CMARK_NODE_IMAGE) {
      continue;
    }
    const char* url = cmark_node_get_url(node);
    if (url == nullptr || !is_relative(url)) {
      continue;
    }
    std::string_view target(url);
    while (target.starts_with("./")) {
      target.remove_prefix(2);
    }
    const std::string& base = type == CMARK_NODE_IMAGE ? bases.images : bases.links;
    auto* rebased = static_cast<char*>(memory->calloc(base.size() + target.size() + 2, 1));
    std::memcpy(rebased, base.data(), base.size());
    rebased[base.size()] = '/';
    std::memcpy(rebased + base.size() + 1, target.data(), target.size());
    cmark_node_set_url(node, rebased);
    memory->free(rebased);
  }
}

// What the budget's work function needs; everything in it outlives the work.
struct RenderJob {
  std::string_view text;
  const LinkBases* bases;
  cmark_mem* memory;
  const char* html = nullptr;
};

void render_job(void* data) {
  auto& job = *static_cast<RenderJob*>(data);
  cmark_parser* parser = cmark_parser_new_with_mem(k_options, job.memory);
  for (const char* name : k_extensions) {
    if (cmark_syntax_extension* extension = cmark_find_syntax_extension(name)) {
      cmark_parser_attach_syntax_extension(parser, extension);
    }
  }
  cmark_parser_feed(parser, job.text.data(), job.text.size());
  cmark_node* document = cmark_parser_finish(parser);
  rebase_links(document, *job.bases, job.memory);
  // Nothing is freed here: the budget frees every block cmark-gfm holds when it goes.
  job.html = cmark_render_html_with_mem(document, k_options,
                                        cmark_parser_get_syntax_extensions(parser), job.memory);
}

std::string mib(std::size_t bytes) { return fmt::format("{} MiB", bytes >> 20); }

// Why `text` is not rendered under `limits` before trying, or "".
std::string refusal_before(std::string_view text, const MarkdownLimits& limits) {
  if (text.size() > limits.max_input_bytes) {
    return fmt::format("it is {}, more than the {} rendered", human_size(text.size()),
                       human_size(limits.max_input_bytes));
  }
  const MarkdownShape shape = measure_markdown(text);
  if (shape.widest_table > limits.max_table_columns) {
    return fmt::format("a table in it may have {} columns, more than the {} rendered",
                       shape.widest_table, limits.max_table_columns);
  }
  if (shape.table_cells > limits.max_table_cells) {
    return fmt::format("its tables may have {} cells, more than the {} rendered",
                       shape.table_cells, limits.max_table_cells);
  }
  if (shape.nesting_work > limits.max_nesting_work) {
    return "it nests block quotes or lists too deeply for its length";
  }
  return "";
}

std::chrono::nanoseconds thread_cpu_time() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

std::string cache_key(std::string_view text, const LinkBases& bases) {
  return verify::sha256(text) + bases.links + '\n' + bases.images;
}

}  // namespace

std::string_view strip_front_matter(std::string_view markdown) {
  if (!markdown.starts_with("---\n") && !markdown.starts_with("---\r\n")) {
    return markdown;
  }
  std::size_t line = markdown.find('\n') + 1;
  while (line < markdown.size()) {
    std::size_t end = markdown.find('\n', line);
    const std::size_t next = end == std::string_view::npos ? markdown.size() : end + 1;
    std::string_view text = markdown.substr(line, next - line);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
      text.remove_suffix(1);
    }
    if (text == "---") {
      return markdown.substr(next);
    }
    line = next;
  }
  return markdown;  // no closing fence: not front matter, show it all
}

std::string front_matter_license(std::string_view markdown) {
  const std::string_view body = strip_front_matter(markdown);
  if (body.size() == markdown.size()) {
    return "";
  }
  const std::string_view matter = markdown.substr(0, markdown.size() - body.size());
  std::size_t line = 0;
  while (line < matter.size()) {
    const std::size_t end = std::min(matter.find('\n', line), matter.size());
    std::string_view text = matter.substr(line, end - line);
    if (text.starts_with("license:")) {
      text.remove_prefix(8);
      while (!text.empty() && (text.front() == ' ' || text.front() == '"' ||
                               text.front() == '\'')) {
        text.remove_prefix(1);
      }
      while (!text.empty() && (text.back() == ' ' || text.back() == '\r' ||
                               text.back() == '"' || text.back() == '\'')) {
        text.remove_suffix(1);
      }
      return std::string(text);
    }
    line = end + 1;
  }
  return "";
}

RenderedMarkdown render_markdown(std::string_view markdown, const LinkBases& bases,
                                 const MarkdownLimits& limits) {
  // Registration fills a global list; once, before any parser looks extensions up.
  static std::once_flag registered;
  std::call_once(registered, [] { cmark_gfm_core_extensions_ensure_registered(); });

  RenderedMarkdown result;
  const std::string_view body = strip_front_matter(markdown);
  result.refusal = refusal_before(body, limits);
  if (!result.refusal.empty()) {
    return result;
  }
  MarkdownBudget::Outcome outcome;
  {
    MarkdownBudget budget(limits.budget);
    RenderJob job{body, &bases, budget.memory()};
    outcome = budget.run(render_job, &job);
    result.peak_bytes = budget.peak_bytes();
    if (outcome == MarkdownBudget::Outcome::finished) {
      result.html = job.html != nullptr ? job.html : "";
    }
  }
  // What a large rendering freed stays in this thread's malloc arena, where a rendering on
  // another thread cannot reuse it: give it back, so the server's memory is bounded by the
  // renderings running at once, not by every thread that ever rendered one.
  if (result.peak_bytes > k_trim_after_bytes) {
    ::malloc_trim(0);
  }
  switch (outcome) {
    case MarkdownBudget::Outcome::finished:
      break;
    case MarkdownBudget::Outcome::out_of_memory:
      result.refusal = fmt::format("rendering it needs more than {} of memory",
                                   mib(limits.budget.max_bytes));
      return result;
    case MarkdownBudget::Outcome::out_of_time:
      result.refusal = fmt::format("rendering it takes more than {} ms",
                                   limits.budget.max_cpu.count());
      return result;
    case MarkdownBudget::Outcome::no_timer:
      result.refusal = "the server cannot limit the time rendering it would take";
      return result;
  }
  if (result.html.size() > limits.max_output_bytes) {
    result.refusal = fmt::format("its HTML would be {}, more than the {} sent",
                                 human_size(result.html.size()),
                                 human_size(limits.max_output_bytes));
    result.html.clear();
  }
  return result;
}

std::shared_ptr<const RenderedMarkdown> page_markdown(std::string_view markdown,
                                                      const LinkBases& bases) {
  static MarkdownCache cache(std::size_t{64} << 20);
  static std::counting_semaphore<> renderers(4);
  const std::string key = cache_key(markdown, bases);
  if (auto kept = cache.find(key)) {
    return kept;
  }
  renderers.acquire();
  // Another request may have rendered the same text while this one waited.
  auto rendered = cache.find(key);
  if (!rendered) {
    try {
      rendered = std::make_shared<const RenderedMarkdown>(render_markdown(markdown, bases));
    } catch (...) {
      renderers.release();
      throw;
    }
    cache.insert(key, rendered);
  }
  renderers.release();
  return rendered;
}

std::string PageMarkdown::html(std::string_view markdown, const LinkBases& bases) {
  const MarkdownLimits page;  // the bounds of one text, spread over all of the page's
  std::string refusal;
  if (m_bytes + markdown.size() > page.max_input_bytes || m_cpu >= page.budget.max_cpu) {
    refusal = "this page has rendered as much Markdown as one page may";
  } else {
    m_bytes += markdown.size();
    const auto start = thread_cpu_time();
    const auto rendered = page_markdown(markdown, bases);
    m_cpu += thread_cpu_time() - start;
    if (rendered->refusal.empty()) {
      return rendered->html;
    }
    refusal = rendered->refusal;
  }
  return fmt::format("<p class=\"muted markdown-refused\">Shown as text, not rendered: "
                     "{}.</p>\n<pre class=\"markdown-text\"><code>{}</code></pre>\n",
                     escape(refusal), escape(markdown));
}

}  // namespace kernelhub::server::web
