// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/markdown.hpp>

#include <cstdlib>
#include <memory>
#include <mutex>

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>

namespace kernelhub::server::web {

namespace {

struct ParserFree {
  void operator()(cmark_parser* parser) const { cmark_parser_free(parser); }
};
struct NodeFree {
  void operator()(cmark_node* node) const { cmark_node_free(node); }
};
struct IterFree {
  void operator()(cmark_iter* iter) const { cmark_iter_free(iter); }
};

// CMARK_OPT_SAFE is the default of this cmark-gfm and kept for older ones; VALIDATE_UTF8
// replaces invalid bytes so the page stays valid UTF-8 whatever the card holds.
constexpr int k_options = CMARK_OPT_SAFE | CMARK_OPT_VALIDATE_UTF8 | CMARK_OPT_GITHUB_PRE_LANG;
constexpr const char* k_extensions[] = {"table", "autolink", "strikethrough", "tasklist",
                                        "tagfilter"};

bool is_relative(std::string_view url) {
  if (url.empty() || url.front() == '/' || url.front() == '#' || url.front() == '?') {
    return false;
  }
  // A scheme ("https:", "mailto:") comes before any '/', '?' or '#'.
  const std::size_t colon = url.find(':');
  return colon == std::string_view::npos || url.find_first_of("/?#") < colon;
}

// Relative card links name files of the revision shown; written as is they would resolve
// against the page's own URL, which is not a folder of the repository.
void rebase_links(cmark_node* document, const LinkBases& bases) {
  std::unique_ptr<cmark_iter, IterFree> iter(cmark_iter_new(document));
  cmark_event_type event;
  while ((event = cmark_iter_next(iter.get())) != CMARK_EVENT_DONE) {
    cmark_node* node = cmark_iter_get_node(iter.get());
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
    const std::string rebased = base + "/" + std::string(target);
    cmark_node_set_url(node, rebased.c_str());
  }
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

std::string render_markdown(std::string_view markdown, const LinkBases& bases) {
  // Registration fills a global list; once, before any parser looks extensions up.
  static std::once_flag registered;
  std::call_once(registered, [] { cmark_gfm_core_extensions_ensure_registered(); });

  std::unique_ptr<cmark_parser, ParserFree> parser(cmark_parser_new(k_options));
  for (const char* name : k_extensions) {
    if (cmark_syntax_extension* extension = cmark_find_syntax_extension(name)) {
      cmark_parser_attach_syntax_extension(parser.get(), extension);
    }
  }
  const std::string_view body = strip_front_matter(markdown);
  cmark_parser_feed(parser.get(), body.data(), body.size());
  std::unique_ptr<cmark_node, NodeFree> document(cmark_parser_finish(parser.get()));
  rebase_links(document.get(), bases);
  char* html = cmark_render_html(document.get(), k_options,
                                 cmark_parser_get_syntax_extensions(parser.get()));
  std::string out = html != nullptr ? html : "";
  // cmark-gfm allocates with its default allocator, which is malloc.
  std::free(html);
  return out;
}

}  // namespace kernelhub::server::web
