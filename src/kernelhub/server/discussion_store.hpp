// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <kernelhub/server/hub_error.hpp>

namespace kernelhub::server {

// The discussions and pull requests of one repository, kept in the Hub's own JSON shapes (so
// the handlers answer them nearly as stored) in `<repo>.git/discussions.json`:
//   {"version": 1, "discussions": [{"num", "title", "status", "isPullRequest", "createdAt",
//     "author": {"name"}, "base"?: "refs/heads/<b>", "mergeCommitId"?, "events": [...]}]}
// Written whole through a temporary file and a rename, so a crash leaves the old or the new
// list. Writers hold the repository's write mutex; readers need no lock.
class DiscussionStore {
 public:
  explicit DiscussionStore(const std::filesystem::path& repo_dir);

  // The stored list; an empty one when the repository has none yet.
  HubExpected<nlohmann::json> load() const;
  HubExpected<void> save(const nlohmann::json& all) const;

 private:
  std::string shown_path() const;  // the file as error messages name it

  std::filesystem::path m_path;
};

// Statuses: "draft", "open", "closed", "merged" (pull requests only).
// The discussion numbered `num` in a loaded list, or null.
nlohmann::json* find_discussion(nlohmann::json& all, long num);
// One more than the highest number used (discussions and pull requests share them).
long next_discussion_number(const nlohmann::json& all);

// A new discussion (or pull request targeting `base_ref`) with no events yet.
nlohmann::json new_discussion(long num, std::string_view title, std::string_view author,
                              const std::optional<std::string>& base_ref);

// Events as the Hub serialises them (huggingface_hub's deserialize_event reads them).
nlohmann::json comment_event(std::string_view text, std::string_view author);
nlohmann::json status_event(std::string_view status, std::string_view author);
nlohmann::json commit_event(std::string_view subject, std::string_view oid,
                            std::string_view author);
nlohmann::json title_event(std::string_view from, std::string_view to, std::string_view author);
// Replaces a comment's text, keeping the previous one in its history.
void edit_comment(nlohmann::json& event, std::string_view text, std::string_view author);

// Hides a comment for good, as the Hub does: its text (and history) is gone.
void hide_comment(nlohmann::json& event, std::string_view author);

// `%Y-%m-%dT%H:%M:%S.000Z` of now.
std::string now_iso();

}  // namespace kernelhub::server
