// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

// A repository's discussions and pull requests as the Hub's discussions API answers them
// (`/api/{T}s/{repo}/discussions[/{num}]`): the fields huggingface_hub's Discussion,
// DiscussionWithDetails and event classes read (community.py's deserialize_event), so what
// one client sees the other sees too.
namespace kernelhub::hub {

struct DiscussionEvent {
  std::string id;
  std::string type;  // "comment", "commit", "status-change", "title-change", or another
  std::string author;
  std::string created_at;
  // comment: its raw text; commit: its subject; status-change: the new status;
  // title-change: the new title.
  std::string text;
  std::string old_title;  // title-change
  std::string oid;        // commit
  bool hidden = false;    // comment
};

struct Discussion {
  long num = 0;
  std::string title;
  std::string status;  // "open", "closed", "merged", "draft"
  std::string author;
  std::string created_at;
  bool is_pull_request = false;
  // Filled by discussion_details only (`has_details`: the answer had its events).
  bool has_details = false;
  std::optional<std::string> target_branch;  // "refs/heads/v1" (pull requests)
  std::optional<std::string> merge_commit;
  std::vector<std::string> conflicting_files;
  std::optional<std::string> diff;
  std::vector<DiscussionEvent> events;
};

// Lenient readers: a missing field is empty, as huggingface_hub's `.get` makes it.
DiscussionEvent parse_discussion_event(const nlohmann::json& event);
Discussion parse_discussion(const nlohmann::json& discussion);

nlohmann::json to_json(const DiscussionEvent& event);
nlohmann::json to_json(const Discussion& discussion);

}  // namespace kernelhub::hub
