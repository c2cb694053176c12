// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <kernelhub/server/hub_error.hpp>

struct git_repository;

namespace kernelhub::server {

// The git side of pull requests: `refs/pr/<N>` refs, merging one into its base branch and the
// diff a review shows. Callers hold the repository's write mutex for the writes.

// Creates `ref` at `commit`; 409 when it exists already.
HubExpected<void> create_ref(git_repository* repo, const std::string& ref,
                             const std::string& commit);
HubExpected<void> delete_ref(git_repository* repo, const std::string& ref);

// Merges `head_ref` into `base_ref` with a merge commit (parents: the base head, then the
// head), whatever the base did meanwhile, as long as no file conflicts: then nothing moves
// and `conflicts` names the files. A variant folder (`build/<variant>/`) the head changed
// since the merge base is taken whole from the head, never merged file by file (a build is
// not mergeable text: the reviewer approved that build); conflicts outside them stay. The base moves with a compare-and-swap (412 when it moved
// during the merge).
struct MergeOutcome {
  std::string commit;                  // the merge commit, empty on conflicts
  std::vector<std::string> conflicts;  // paths
};
HubExpected<MergeOutcome> merge_refs(git_repository* repo, const std::string& base_ref,
                                     const std::string& head_ref, const std::string& message);

// The files in conflict if `head_ref` were merged into `base_ref` now (merge_refs' rule,
// without writing anything).
HubExpected<std::vector<std::string>> merge_conflicts(git_repository* repo,
                                                      const std::string& base_ref,
                                                      const std::string& head_ref);

// `git diff <merge-base> <head>` as a patch (binary files named, not shown), cut at
// `max_bytes` with a last line that says so.
HubExpected<std::string> pull_request_diff(git_repository* repo, const std::string& base_ref,
                                           const std::string& head_ref, std::size_t max_bytes);

// The patch from commit `before` (none: the empty tree) to commit `after`, as
// pull_request_diff prints it: what a commit page and a pull request page show.
HubExpected<std::string> commits_diff(git_repository* repo,
                                      const std::optional<std::string>& before,
                                      const std::string& after, std::size_t max_bytes);

}  // namespace kernelhub::server
