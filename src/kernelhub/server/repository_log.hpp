// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <kernelhub/server/hub_error.hpp>

struct git_repository;

namespace kernelhub::server {

// One commit of a history listing, for the web pages.
struct CommitLogEntry {
  std::string sha;
  std::int64_t time = 0;  // seconds since the epoch
  std::string title;
  std::string author;
  std::string body;  // the message after the title line (git_commit_body), often empty
};

// The commits reachable from `sha` (a full commit id), newest first by commit time, at most
// `limit` of them; `truncated` is set when more were left out.
HubExpected<std::vector<CommitLogEntry>> list_commits(git_repository* repo,
                                                      const std::string& sha, std::size_t limit,
                                                      bool* truncated = nullptr);

// The best common ancestor of two commits (full ids), for the file changes a pull request
// brings: 404 RevisionNotFound when they share no history.
HubExpected<std::string> merge_base(git_repository* repo, const std::string& a,
                                    const std::string& b);

// The first parent of `sha`; nullopt for a root commit.
HubExpected<std::optional<std::string>> first_parent(git_repository* repo, const std::string& sha);

}  // namespace kernelhub::server
