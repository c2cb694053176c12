// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <string>
#include <vector>

#include <kernelhub/server/hub_error.hpp>
#include <kernelhub/server/repository_reader.hpp>

struct git_repository;

namespace kernelhub::server {

// The newest commit that changed each of `paths` (files or folders) in the first-parent
// history of `commit`: what the Hub's `expand=true` listings call `lastCommit`. A path's
// entry is compared with the one in the commit's first parent; the first commit where they
// differ (or the root commit, where the path exists) is its last commit. The walk stops after
// k_max_history_walk commits; paths still unresolved then get the oldest commit walked, so a
// listing of a long history stays bounded. Paths missing at `commit` get no entry.
std::map<std::string, CommitSummary> last_commits(git_repository* repo, const std::string& commit,
                                                 const std::vector<std::string>& paths);

// The file or folder at `path` in `commit` (size read for files), or EntryNotFound.
HubExpected<TreeItem> path_item(git_repository* repo, const std::string& commit,
                                const std::string& path);

}  // namespace kernelhub::server
