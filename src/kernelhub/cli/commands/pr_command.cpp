// SPDX-License-Identifier: Apache-2.0
// `kernelhub pr list|show|comment|merge|close|reopen REPO_ID [NUM]`: reviewing a kernel's pull
// requests (issue 22 §5) through the Hub's discussions API, on huggingface.co (HF_ENDPOINT,
// HF_TOKEN or the token file) or `kernelhub serve` alike. `--json` prints what scripts read.
#include <cstdio>
#include <memory>
#include <string>
#include <tuple>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/hub/hub_client.hpp>
#include <kernelhub/util/fatal_error.hpp>

namespace kernelhub::cli::commands {

namespace {

struct PrOptions {
  std::string repo_id;
  std::string repo_type = "kernel";
  std::string token;
  long num = 0;
  bool json = false;
  // list
  std::string status = "open";
  std::string author;
  // show
  bool no_diff = false;
  // comment; merge, close and reopen take an optional one
  std::string comment;
};

template <typename T>
T hub_or_fatal(hub::HubResult<T> result) {
  if (!result) {
    throw util::FatalError(result.error().message);
  }
  return std::move(*result);
}

struct Session {
  hub::RepoRef repo;
  hub::HubClient client;
};

Session open_session(const PrOptions& options) {
  auto endpoint = hub::Endpoint::from_environment();
  if (!options.token.empty()) {
    endpoint.token = options.token;
  }
  const auto type = hub::parse_repo_type(options.repo_type);
  return Session{hub::RepoRef{value_or_fatal(hub::RepoId::parse(options.repo_id)), *type},
                 hub::HubClient(endpoint)};
}

void print(const std::string& text) { std::fputs(text.c_str(), stdout); }

// "refs/heads/v1" -> "v1".
std::string branch_name(const std::optional<std::string>& ref) {
  if (!ref) {
    return "-";
  }
  constexpr std::string_view k_heads = "refs/heads/";
  return ref->starts_with(k_heads) ? ref->substr(k_heads.size()) : *ref;
}

void run_list(const PrOptions& options) {
  const auto session = open_session(options);
  const auto listed = hub_or_fatal(session.client.list_discussions(
      session.repo, "pull_request", options.status, options.author));
  if (options.json) {
    auto out = nlohmann::json::array();
    for (const auto& discussion : listed) {
      out.push_back(hub::to_json(discussion));
    }
    print(out.dump(2) + "\n");
    return;
  }
  if (listed.empty()) {
    print(fmt::format("No {} pull requests on {}.\n", options.status == "all" ? "" : options.status + " ",
                      session.repo.id.str()));
    return;
  }
  for (const auto& discussion : listed) {
    print(fmt::format("#{:<4} {:<7} {}  ({}, {})\n", discussion.num, discussion.status,
                      discussion.title, discussion.author, discussion.created_at));
  }
}

std::string event_line(const hub::DiscussionEvent& event) {
  if (event.type == "comment") {
    if (event.hidden) {
      return fmt::format("{} commented (hidden)", event.author);
    }
    std::string text = event.text;
    for (std::size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 3)) {
      text.replace(at, 1, "\n    ");
    }
    return fmt::format("{} commented:\n    {}", event.author, text);
  }
  if (event.type == "commit") {
    return fmt::format("{} pushed {} {}", event.author, event.oid.substr(0, 7), event.text);
  }
  if (event.type == "status-change") {
    return fmt::format("{} changed the status to {}", event.author, event.text);
  }
  if (event.type == "title-change") {
    return fmt::format("{} renamed it from \"{}\" to \"{}\"", event.author, event.old_title, event.text);
  }
  return fmt::format("{} ({})", event.author, event.type);
}

void run_show(const PrOptions& options) {
  const auto session = open_session(options);
  auto details = hub_or_fatal(session.client.discussion_details(session.repo, options.num));
  if (options.no_diff) {
    details.diff.reset();
  }
  if (options.json) {
    print(hub::to_json(details).dump(2) + "\n");
    return;
  }
  print(fmt::format("#{} {}\n", details.num, details.title));
  if (details.is_pull_request) {
    print(fmt::format("status: {}   target: {}   author: {}   opened: {}\n", details.status,
                      branch_name(details.target_branch), details.author, details.created_at));
  } else {
    print(fmt::format("status: {} (a discussion, not a pull request)   author: {}\n",
                      details.status, details.author));
  }
  if (details.merge_commit) {
    print(fmt::format("merged as {}\n", *details.merge_commit));
  }
  if (!details.conflicting_files.empty()) {
    print(fmt::format("conflicts with {}: {}\n", branch_name(details.target_branch),
                      fmt::format("{}", fmt::join(details.conflicting_files, ", "))));
  }
  print("\n");
  for (const auto& event : details.events) {
    print(fmt::format("  {}  {}\n", event.created_at, event_line(event)));
  }
  if (details.diff && !details.diff->empty()) {
    print("\n" + *details.diff);
    if (details.diff->back() != '\n') {
      print("\n");
    }
  }
}

void print_event(const PrOptions& options, const hub::DiscussionEvent& event,
                 const std::string& text) {
  if (options.json) {
    print(hub::to_json(event).dump(2) + "\n");
  } else {
    print(text + "\n");
  }
}

void add_common(CLI::App& sub, PrOptions& options, bool with_number) {
  sub.add_option("REPO_ID", options.repo_id, "the repository (\"org/name\")")->required();
  if (with_number) {
    sub.add_option("NUM", options.num, "the pull request's number")
        ->required()
        ->check(CLI::PositiveNumber);
  }
  sub.add_option("--repo-type", options.repo_type, "repository type")
      ->check(CLI::IsMember({"kernel", "model", "dataset"}))
      ->capture_default_str();
  sub.add_option("--token", options.token, "Hub token (default: HF_TOKEN or the token file)");
  sub.add_flag("--json", options.json, "print JSON for scripts");
}

}  // namespace

void declare_pr(CLI::App& app, RunState& /*state*/) {
  auto* pr = app.add_subcommand("pr");
  pr->require_subcommand(1);

  auto list = std::make_shared<PrOptions>();
  auto* list_cmd = pr->add_subcommand("list", "list a repository's pull requests, newest first");
  add_common(*list_cmd, *list, false);
  list_cmd->add_option("--status", list->status, "which ones (open counts drafts, closed merged ones)")
      ->check(CLI::IsMember({"open", "closed", "all"}))
      ->capture_default_str();
  list_cmd->add_option("--author", list->author, "only those opened by this user");
  list_cmd->callback([list] { run_list(*list); });

  auto show = std::make_shared<PrOptions>();
  auto* show_cmd = pr->add_subcommand(
      "show", "show a pull request: status, target branch, conflicts, comments, commits and the diff");
  add_common(*show_cmd, *show, true);
  show_cmd->add_flag("--no-diff", show->no_diff, "leave the diff out");
  show_cmd->callback([show] { run_show(*show); });

  auto comment = std::make_shared<PrOptions>();
  auto* comment_cmd = pr->add_subcommand("comment", "comment on a pull request");
  add_common(*comment_cmd, *comment, true);
  comment_cmd->add_option("COMMENT", comment->comment, "the comment (Markdown)")->required();
  comment_cmd->callback([comment] {
    const auto session = open_session(*comment);
    const auto event = hub_or_fatal(
        session.client.comment_discussion(session.repo, comment->num, comment->comment));
    print_event(*comment, event, fmt::format("Commented on #{}.", comment->num));
  });

  auto merge = std::make_shared<PrOptions>();
  auto* merge_cmd = pr->add_subcommand(
      "merge", "merge a pull request into its target branch (a conflict is refused, nothing moves)");
  add_common(*merge_cmd, *merge, true);
  merge_cmd->add_option("--comment", merge->comment, "a comment posted with the merge");
  merge_cmd->callback([merge] {
    const auto session = open_session(*merge);
    const auto event = hub_or_fatal(
        session.client.merge_pull_request(session.repo, merge->num, merge->comment));
    print_event(*merge, event, fmt::format("Merged #{}.", merge->num));
  });

  for (const auto& [name, status, help] :
       {std::tuple{"close", "closed", "close a pull request without merging it"},
        std::tuple{"reopen", "open", "reopen a closed pull request"}}) {
    auto options = std::make_shared<PrOptions>();
    auto* sub = pr->add_subcommand(name, help);
    add_common(*sub, *options, true);
    sub->add_option("--comment", options->comment, "a comment posted with the change");
    const std::string new_status = status;
    sub->callback([options, new_status] {
      const auto session = open_session(*options);
      const auto event = hub_or_fatal(session.client.change_discussion_status(
          session.repo, options->num, new_status, options->comment));
      print_event(*options, event,
                  fmt::format("#{} is now {}.", options->num, event.text.empty() ? new_status : event.text));
    });
  }
}

}  // namespace kernelhub::cli::commands
