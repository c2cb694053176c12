// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/discussion_pages.hpp>

#include <charconv>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/server/discussion_store.hpp>
#include <kernelhub/server/repository_log.hpp>
#include <kernelhub/server/repository_merge.hpp>
#include <kernelhub/server/web/diff_view.hpp>
#include <kernelhub/server/web/file_changes.hpp>
#include <kernelhub/server/web/html.hpp>
#include <kernelhub/server/web/markdown.hpp>
#include <kernelhub/server/web/page_layout.hpp>

namespace kernelhub::server::web {

namespace {

using nlohmann::json;

// A discussion page shows this many events (comments of up to 64 KiB each, status changes),
// so its size is bounded however long the discussion grows.
constexpr std::size_t k_max_events_shown = 200;
// A page shows this much of a diff at most (the rest is cut with a line that says so).
constexpr std::size_t k_max_page_diff = std::size_t{512} << 10;

// "v1" for a pull request into refs/heads/v1.
std::string branch_name(const std::string& ref) {
  return ref.starts_with("refs/heads/") ? ref.substr(11) : ref;
}

std::string text_of(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string status_chip(const json& discussion) {
  const std::string status = text_of(discussion, "status");
  return fmt::format("<span class=\"chip status-{0}\">{0}</span>", escape(status));
}

// Where the pull request started from: the merge base of its head with the base branch, or,
// once merged, with the base as it was just before the merge (after it, the base holds the
// head and nothing would show as changed).
HubExpected<std::string> review_base(const RepoView& view, const json& discussion,
                                     const std::string& head) {
  const std::string base_ref = text_of(discussion, "base").empty()
                                   ? std::string("refs/heads/main")
                                   : text_of(discussion, "base");
  std::string base = KH_HUB_TRY(resolve_revision(view.repo.git.get(), base_ref));
  const std::string merged = text_of(discussion, "mergeCommitId");
  if (!merged.empty()) {
    if (const auto parent = first_parent(view.repo.git.get(), merged); parent && *parent) {
      base = **parent;
    }
  }
  return merge_base(view.repo.git.get(), base, head);
}

std::string events_html(const RepoView& view, const json& discussion,
                        const std::string& head_rev) {
  std::string html = "<h2 id=\"activity\">Activity</h2>\n<ol class=\"events\" id=\"events\">\n";
  const auto events = discussion.find("events");
  if (events == discussion.end() || !events->is_array()) {
    return html + "</ol>\n";
  }
  const LinkBases bases{fmt::format("{}/blob/{}", view.base, url_part(head_rev)),
                        fmt::format("{}/resolve/{}", view.base, url_part(head_rev))};
  PageMarkdown texts;
  std::size_t shown = 0;
  for (const auto& event : *events) {
    if (!event.is_object()) {
      continue;
    }
    if (shown++ == k_max_events_shown) {
      html += fmt::format("<li class=\"muted\" id=\"events-truncated\">Only the first {} of "
                          "{} events are shown.</li>\n",
                          k_max_events_shown, events->size());
      break;
    }
    const std::string type = text_of(event, "type");
    const json data = event.value("data", json::object());
    const std::string author = text_of(event.value("author", json::object()), "name");
    const std::string when = text_of(event, "createdAt").substr(0, 16);
    std::string what;
    if (type == "comment") {
      what = data.value("hidden", false)
                 ? "<p class=\"muted\">This comment is hidden.</p>"
                 : "<div class=\"comment\">" +
                       texts.html(text_of(data.value("latest", json::object()), "raw"), bases) +
                       "</div>";
    } else if (type == "commit") {
      const std::string oid = text_of(data, "oid");
      what = fmt::format("pushed <a href=\"{}/tree/{}\"><code>{}</code></a> {}",
                         escape(view.base), escape(url_part(oid)), escape(oid.substr(0, 12)),
                         escape(text_of(data, "subject")));
    } else if (type == "status-change") {
      what = fmt::format("changed the status to <strong>{}</strong>",
                         escape(text_of(data, "status")));
    } else if (type == "title-change") {
      what = fmt::format("renamed it from “{}” to “{}”", escape(text_of(data, "from")),
                         escape(text_of(data, "to")));
    } else {
      what = escape(type);
    }
    html += fmt::format(
        "<li class=\"event {}\"><span class=\"muted\">{} · {}</span> {}</li>\n", escape(type),
        escape(author), escape(when), what);
  }
  return html + "</ol>\n";
}

}  // namespace

HubExpected<HttpResponse> discussions_page(handlers::Context& ctx, const RepoView& view) {
  const json all = KH_HUB_TRY(DiscussionStore(ctx.store.directory(view.id)).load());
  std::string body = repo_header(view, "main", Tab::community);
  body += "<table id=\"discussions\"><thead><tr><th>#</th><th>Title</th><th>Kind</th>"
          "<th>Status</th><th>Target</th><th>Opened</th></tr></thead>\n<tbody>\n";
  std::size_t count = 0;
  const auto list = all.find("discussions");
  if (list != all.end() && list->is_array()) {
    // Newest first, as the Hub lists them.
    for (auto it = list->rbegin(); it != list->rend(); ++it) {
      const json& discussion = *it;
      const long num = discussion.value("num", 0L);
      const bool is_pr = discussion.value("isPullRequest", false);
      // A pull request's target branch, linked; a discussion has none.
      const std::string base = branch_name(text_of(discussion, "base").empty()
                                               ? std::string("refs/heads/main")
                                               : text_of(discussion, "base"));
      const std::string target =
          is_pr ? fmt::format("<a href=\"{}/tree/{}\"><code>{}</code></a>", escape(view.base),
                              escape(url_part(base)), escape(base))
                : std::string("—");
      body += fmt::format(
          "<tr><td class=\"num\">{0}</td><td><a href=\"{1}/discussions/{0}\">{2}</a></td>"
          "<td>{3}</td><td>{4}</td><td class=\"target\">{5}</td><td>{6}</td></tr>\n",
          num, escape(view.base), escape(text_of(discussion, "title")),
          is_pr ? "pull request" : "discussion", status_chip(discussion), target,
          escape(text_of(discussion, "createdAt").substr(0, 10)));
      ++count;
    }
  }
  body += "</tbody></table>\n";
  if (count == 0) {
    body += "<p class=\"muted\" id=\"none\">No discussions or pull requests yet.</p>\n";
  }
  return html_response(
      page_html({fmt::format("{} · community", view.id.id()), repo_crumbs(view), body}));
}

HubExpected<HttpResponse> discussion_page(handlers::Context& ctx, const RepoView& view,
                                          const std::string& number) {
  long num = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), num);
  if (error != std::errc() || end != number.data() + number.size() || num <= 0) {
    return hub_fail(404, "", fmt::format("no discussion \"{}\" in {}", number, view.id.id()));
  }
  json all = KH_HUB_TRY(DiscussionStore(ctx.store.directory(view.id)).load());
  const json* discussion = find_discussion(all, num);
  if (discussion == nullptr) {
    return hub_fail(404, "", fmt::format("no discussion {} in {}", num, view.id.id()));
  }
  const bool is_pr = discussion->value("isPullRequest", false);
  const std::string head_rev = fmt::format("refs/pr/{}", num);
  std::string body = repo_header(view, is_pr ? head_rev : "main", Tab::community);
  body += fmt::format("<h2 id=\"discussion-title\">{} <span class=\"muted\">#{}</span> {}</h2>\n",
                      escape(text_of(*discussion, "title")), num, status_chip(*discussion));
  if (is_pr) {
    const std::string base_name = branch_name(text_of(*discussion, "base"));
    body += fmt::format(
        "<p id=\"pr-refs\">Pull request from <a href=\"{0}/tree/{1}\"><code>{2}</code></a> into "
        "<a href=\"{0}/tree/{3}\"><code>{4}</code></a></p>\n",
        escape(view.base), escape(url_part(head_rev)), escape(head_rev),
        escape(url_part(base_name)), escape(base_name));
    auto head = resolve_revision(view.repo.git.get(), head_rev);
    if (!head) {
      body += "<p class=\"muted\">The head of this pull request is gone.</p>\n";
    } else {
      auto base = review_base(view, *discussion, *head);
      auto changes = base ? file_changes(view, *base, *head)
                          : HubExpected<std::vector<FileChange>>(tl::unexpected(base.error()));
      body += changes ? file_changes_html(view, *changes, head_rev)
                      : fmt::format("<p class=\"muted\">The changes cannot be shown: {}</p>\n",
                                    escape(changes.error().message));
      if (base) {
        const auto patch = commits_diff(view.repo.git.get(), *base, *head, k_max_page_diff);
        body += patch ? diff_html(*patch)
                      : fmt::format("<p class=\"muted\">The diff cannot be shown: {}</p>\n",
                                    escape(patch.error().message));
      }
      if (view.id.type == RepoType::kernel) {
        body += kernel_revision_html(view, *head, head_rev);
      }
    }
  }
  body += events_html(view, *discussion, is_pr ? head_rev : "main");
  return html_response(page_html(
      {fmt::format("{} · #{} {}", view.id.id(), num, text_of(*discussion, "title")),
       repo_crumbs(view), body}));
}

}  // namespace kernelhub::server::web
