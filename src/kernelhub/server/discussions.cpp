// SPDX-License-Identifier: Apache-2.0
// The discussions API subset huggingface_hub uses (get_repo_discussions,
// get_discussion_details, create_discussion/create_pull_request, comment_discussion,
// rename_discussion, change_discussion_status, merge_pull_request, edit_discussion_comment,
// hide_discussion_comment):
// `/api/{T}/{repo}/discussions[/{num}[/{action}]]`. Reads follow the repository's visibility;
// every write needs a write token (HubRouter::admit checks it before the body is read).
#include <algorithm>
#include <charconv>
#include <mutex>

#include <fmt/format.h>

#include <kernelhub/server/discussion_store.hpp>
#include <kernelhub/server/handlers.hpp>
#include <kernelhub/server/repository_merge.hpp>
#include <kernelhub/server/repository_reader.hpp>

namespace kernelhub::server::handlers {

namespace {

using nlohmann::json;

// The Hub answers discussion lists 50 at a time.
constexpr std::size_t k_page = 50;
constexpr std::size_t k_min_title = 3;
constexpr std::size_t k_max_title = 200;
constexpr std::size_t k_max_comment = std::size_t{64} << 10;
constexpr std::size_t k_max_diff = std::size_t{1} << 20;

std::string_view type_name(RepoType type) {
  switch (type) {
    case RepoType::model: return "model";
    case RepoType::dataset: return "dataset";
    case RepoType::kernel: return "kernel";
  }
  return "model";
}

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return "";
  }
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

HubExpected<json> json_object_body(const Context& ctx) {
  if (ctx.request.body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return json::object();
  }
  json body = json::parse(ctx.request.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) {
    return bad_request("malformed request body: expected a JSON object");
  }
  return body;
}

HubExpected<std::string> text_member(const json& body, const char* key, std::size_t max_size) {
  const auto it = body.find(key);
  if (it == body.end() || !it->is_string()) {
    return bad_request(fmt::format("malformed request body: \"{}\" must be a string", key));
  }
  std::string text = trimmed(it->get<std::string>());
  if (text.empty()) {
    return bad_request(fmt::format("\"{}\" must not be empty", key));
  }
  if (text.size() > max_size) {
    return bad_request(fmt::format("\"{}\" is too long: {} bytes, at most {}", key, text.size(),
                                   max_size));
  }
  return text;
}

HubExpected<std::string> checked_title(const json& body) {
  std::string title = KH_HUB_TRY(text_member(body, "title", k_max_title));
  if (title.size() < k_min_title) {
    return bad_request(fmt::format("title \"{}\" is too short: at least {} characters", title,
                                   k_min_title));
  }
  return title;
}

// A discussion as lists show it: the stored fields without events and git details.
json listed(const json& discussion, const RepoId& id) {
  json out = discussion;
  std::size_t comments = 0;
  for (const auto& event : discussion["events"]) {
    comments += event.value("type", "") == "comment" ? 1 : 0;
  }
  out.erase("events");
  out.erase("base");
  out.erase("mergeCommitId");
  out["repo"] = {{"name", id.id()}, {"type", type_name(id.type)}};
  out["pinned"] = false;
  out["numComments"] = comments;
  out["topReactions"] = json::array();
  return out;
}

HubExpected<long> discussion_number(std::string_view text) {
  long num = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), num);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || num <= 0) {
    return bad_request(fmt::format("invalid discussion number \"{}\"", text));
  }
  return num;
}

tl::unexpected<HubError> discussion_not_found(const RepoId& id, long num) {
  return hub_fail(404, "", fmt::format("discussion #{} not found in \"{}\"", num, id.id()));
}

// Loads, changes (under the write mutex) and saves one discussion; `change` returns the JSON
// to answer with.
template <typename Change>
HubExpected<HttpResponse> update_discussion(Context& ctx, const RepoId& id, long num,
                                            Change&& change) {
  KH_HUB_TRY(require_write_token(ctx));
  KH_HUB_TRY(ctx.store.open(id));
  std::lock_guard lock(ctx.store.write_mutex(id));
  const DiscussionStore store(ctx.store.directory(id));
  json all = KH_HUB_TRY(store.load());
  json* discussion = find_discussion(all, num);
  if (discussion == nullptr) {
    return discussion_not_found(id, num);
  }
  const json answer = KH_HUB_TRY(change(*discussion));
  KH_HUB_TRY(store.save(all));
  return json_response(200, answer);
}

HubExpected<HttpResponse> list_discussions(Context& ctx, const RepoId& id) {
  RepoId served;
  KH_HUB_TRY(open_for_read(ctx, id, &served));
  const json all = KH_HUB_TRY(DiscussionStore(ctx.store.directory(served)).load());
  std::size_t page = 0;
  if (const auto text = ctx.target.param("p")) {
    const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), page);
    if (text->empty() || error != std::errc() || end != text->data() + text->size()) {
      return bad_request(fmt::format("invalid page \"{}\": expected a non-negative integer",
                                     *text));
    }
  }
  const auto type = ctx.target.param("type");      // all | discussion | pull_request
  const auto status = ctx.target.param("status");  // all | open | closed
  const auto author = ctx.target.param("author");
  std::vector<const json*> kept;
  for (const auto& discussion : all["discussions"]) {
    const bool is_pr = discussion.value("isPullRequest", false);
    const std::string state = discussion.value("status", "");
    if ((type == "discussion" && is_pr) || (type == "pull_request" && !is_pr)) {
      continue;
    }
    // The Hub counts draft as open and merged as closed here.
    const bool open = state == "open" || state == "draft";
    if ((status == "open" && !open) || (status == "closed" && open)) {
      continue;
    }
    if (author && discussion["author"].value("name", "") != *author) {
      continue;
    }
    kept.push_back(&discussion);
  }
  // Newest first, as the Hub lists them.
  std::sort(kept.begin(), kept.end(), [](const json* a, const json* b) {
    return a->value("num", 0L) > b->value("num", 0L);
  });
  json shown = json::array();
  // Compared before multiplying: a huge page number must not wrap round to an early page.
  const std::size_t start = page > kept.size() / k_page ? kept.size() : page * k_page;
  for (std::size_t i = start; i < kept.size() && i < start + k_page; ++i) {
    shown.push_back(listed(*kept[i], served));
  }
  return json_response(200, {{"discussions", std::move(shown)},
                             {"count", kept.size()},
                             {"start", start},
                             {"numClosedDiscussions", 0}});
}

HubExpected<HttpResponse> discussion_details(Context& ctx, const RepoId& id, long num) {
  RepoId served;
  const OpenRepository repo = KH_HUB_TRY(open_for_read(ctx, id, &served));
  json all = KH_HUB_TRY(DiscussionStore(ctx.store.directory(served)).load());
  const json* found = find_discussion(all, num);
  if (found == nullptr) {
    return discussion_not_found(id, num);
  }
  json out = listed(*found, served);
  out["events"] = (*found)["events"];
  if (found->value("isPullRequest", false)) {
    const std::string base = found->value("base", "refs/heads/main");
    const std::string head = fmt::format("refs/pr/{}", num);
    json changes = {{"base", base}};
    if (found->contains("mergeCommitId")) {
      changes["mergeCommitId"] = (*found)["mergeCommitId"];
    }
    out["changes"] = std::move(changes);
    json conflicts = json::array();
    const std::string status = found->value("status", "");
    if (status == "open" || status == "draft") {
      // A base branch deleted since gives no conflicts to show, not a failed answer.
      if (auto paths = merge_conflicts(repo.git.get(), base, head)) {
        conflicts = *paths;
      }
    }
    out["filesWithConflicts"] = std::move(conflicts);
    if (ctx.target.flag("diff")) {
      auto diff = pull_request_diff(repo.git.get(), base, head, k_max_diff);
      out["diff"] = diff ? json(*diff) : json();
    }
  }
  return json_response(200, out);
}

HubExpected<HttpResponse> create_discussion(Context& ctx, const RepoId& id) {
  KH_HUB_TRY(require_write_token(ctx));
  const OpenRepository repo = KH_HUB_TRY(ctx.store.open(id));
  const json body = KH_HUB_TRY(json_object_body(ctx));
  const std::string title = KH_HUB_TRY(checked_title(body));
  const auto description = body.find("description");
  std::string text = description != body.end() && description->is_string()
                         ? trimmed(description->get<std::string>())
                         : "";
  if (text.size() > k_max_comment) {
    return bad_request(fmt::format("\"description\" is too long: {} bytes, at most {}",
                                   text.size(), k_max_comment));
  }
  const auto pull_request = body.find("pullRequest");
  const bool is_pr = pull_request != body.end() && pull_request->is_boolean() &&
                     pull_request->get<bool>();
  std::lock_guard lock(ctx.store.write_mutex(id));
  const DiscussionStore store(ctx.store.directory(id));
  json all = KH_HUB_TRY(store.load());
  const long num = next_discussion_number(all);
  std::optional<std::string> base;
  if (is_pr) {
    // A pull request opened without changes is a draft on the default branch's head, which
    // commits to refs/pr/<N> then fill.
    base = "refs/heads/main";
    const std::string head = KH_HUB_TRY(resolve_revision(repo.git.get(), *base));
    KH_HUB_TRY(create_ref(repo.git.get(), fmt::format("refs/pr/{}", num), head));
  }
  json discussion = new_discussion(num, title, k_discussion_author, base);
  if (!text.empty()) {
    discussion["events"].push_back(comment_event(text, k_discussion_author));
  }
  all["discussions"].push_back(discussion);
  if (auto saved = store.save(all); !saved) {
    if (is_pr) {
      (void)delete_ref(repo.git.get(), fmt::format("refs/pr/{}", num));
    }
    return tl::unexpected(saved.error());
  }
  json answer = listed(discussion, id);
  answer["url"] = discussion_url(ctx, id, num);
  return json_response(200, answer);
}

HubExpected<HttpResponse> comment(Context& ctx, const RepoId& id, long num) {
  const json body = KH_HUB_TRY(json_object_body(ctx));
  const std::string text = KH_HUB_TRY(text_member(body, "comment", k_max_comment));
  return update_discussion(ctx, id, num, [&](json& discussion) -> HubExpected<json> {
    json event = comment_event(text, k_discussion_author);
    discussion["events"].push_back(event);
    return json{{"newMessage", std::move(event)}};
  });
}

HubExpected<HttpResponse> rename(Context& ctx, const RepoId& id, long num) {
  const json body = KH_HUB_TRY(json_object_body(ctx));
  const std::string title = KH_HUB_TRY(checked_title(body));
  return update_discussion(ctx, id, num, [&](json& discussion) -> HubExpected<json> {
    json event = title_event(discussion.value("title", ""), title, k_discussion_author);
    discussion["title"] = title;
    discussion["events"].push_back(event);
    return json{{"newTitle", std::move(event)}};
  });
}

HubExpected<HttpResponse> change_status(Context& ctx, const RepoId& id, long num) {
  const json body = KH_HUB_TRY(json_object_body(ctx));
  const std::string status = KH_HUB_TRY(text_member(body, "status", 16));
  if (status != "open" && status != "closed") {
    return bad_request(fmt::format("invalid status \"{}\": use \"open\" or \"closed\"", status));
  }
  const auto note = body.find("comment");
  const std::string text =
      note != body.end() && note->is_string() ? trimmed(note->get<std::string>()) : "";
  return update_discussion(ctx, id, num, [&](json& discussion) -> HubExpected<json> {
    const std::string current = discussion.value("status", "");
    if (current == "merged") {
      return bad_request(fmt::format("pull request #{} is merged; its status cannot change",
                                     num));
    }
    if (current == status) {
      return bad_request(fmt::format("discussion #{} is already {}", num, status));
    }
    if (!text.empty()) {
      discussion["events"].push_back(comment_event(text, k_discussion_author));
    }
    json event = status_event(status, k_discussion_author);
    discussion["status"] = status;
    discussion["events"].push_back(event);
    return json{{"newStatus", std::move(event)}};
  });
}

HubExpected<HttpResponse> merge(Context& ctx, const RepoId& id, long num) {
  const json body = KH_HUB_TRY(json_object_body(ctx));
  const auto note = body.find("comment");
  const std::string text =
      note != body.end() && note->is_string() ? trimmed(note->get<std::string>()) : "";
  return update_discussion(ctx, id, num, [&](json& discussion) -> HubExpected<json> {
    if (!discussion.value("isPullRequest", false)) {
      return bad_request(fmt::format("discussion #{} is not a pull request", num));
    }
    json event = KH_HUB_TRY(merge_pull_request(ctx, id, discussion));
    if (!text.empty()) {
      discussion["events"].push_back(comment_event(text, k_discussion_author));
    }
    discussion["events"].push_back(event);
    return json{{"newStatus", std::move(event)}};
  });
}

// comment/{id}/edit with {"content"}, or comment/{id}/hide.
HubExpected<HttpResponse> change_comment(Context& ctx, const RepoId& id, long num,
                                         const std::string& event_id, bool hide) {
  const json body = KH_HUB_TRY(json_object_body(ctx));
  std::string text;
  if (!hide) {
    text = KH_HUB_TRY(text_member(body, "content", k_max_comment));
  }
  return update_discussion(ctx, id, num, [&](json& discussion) -> HubExpected<json> {
    for (auto& event : discussion["events"]) {
      if (event.value("id", "") == event_id && event.value("type", "") == "comment") {
        if (event["data"].value("hidden", false)) {
          return bad_request(fmt::format("comment \"{}\" is hidden and cannot change", event_id));
        }
        if (hide) {
          hide_comment(event, k_discussion_author);
        } else {
          edit_comment(event, text, k_discussion_author);
        }
        return json{{"updatedComment", event}};
      }
    }
    return hub_fail(404, "", fmt::format("comment \"{}\" not found in discussion #{}", event_id,
                                         num));
  });
}

}  // namespace

HubExpected<HttpResponse> discussions(Context& ctx, const RepoId& id,
                                      std::span<const std::string> args) {
  const std::string& method = ctx.request.method;
  const bool read = method == "GET" || method == "HEAD";
  const auto wrong_method = [&] {
    return hub_fail(405, "", fmt::format("method {} is not allowed here", method));
  };
  if (args.empty()) {
    if (read) {
      return list_discussions(ctx, id);
    }
    return method == "POST" ? create_discussion(ctx, id) : wrong_method();
  }
  const long num = KH_HUB_TRY(discussion_number(args[0]));
  if (args.size() == 1) {
    return read ? discussion_details(ctx, id, num) : wrong_method();
  }
  const std::string& action = args[1];
  const bool known = (args.size() == 2 && (action == "comment" || action == "title" ||
                                           action == "status" || action == "merge")) ||
                     (args.size() == 4 && action == "comment" &&
                      (args[3] == "edit" || args[3] == "hide"));
  if (!known) {
    return hub_fail(404, "", fmt::format("no route for {} {}", method,
                                         ctx.request.target.substr(0, ctx.request.target.find('?'))));
  }
  if (method != "POST") {
    return wrong_method();
  }
  if (args.size() == 4) {
    return change_comment(ctx, id, num, args[2], args[3] == "hide");
  }
  if (action == "comment") {
    return comment(ctx, id, num);
  }
  if (action == "title") {
    return rename(ctx, id, num);
  }
  if (action == "status") {
    return change_status(ctx, id, num);
  }
  return merge(ctx, id, num);
}

}  // namespace kernelhub::server::handlers
