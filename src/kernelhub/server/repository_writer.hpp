// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <kernelhub/server/commit_request.hpp>
#include <kernelhub/server/hub_error.hpp>

struct git_repository;

namespace kernelhub::server {

// Writes to one repository. Callers hold the repository's write mutex (RepositoryStore).

// Builds the new tree in memory from the branch head's tree and the request's operations,
// writes the objects, then moves the branch with a compare-and-swap against the head it
// started from: a crash at any point leaves the branch at the old or the new commit, and a
// 4xx (stale parentCommit 412, deleting a missing file 404) moves nothing. Returns the sha.
// Writes one file's bytes as a blob (content-addressed, so safe without the write mutex) and
// returns its id; used as the commit parser's BlobSink.
HubExpected<std::string> store_blob(git_repository* repo, std::string_view bytes);

// A blob of `size` bytes written as they come (libgit2's object stream: deflated straight to
// a temporary file), for files too large to hold whole; its id is known at finish().
HubExpected<std::unique_ptr<BlobStream>> open_blob_stream(git_repository* repo,
                                                          std::uint64_t size);

HubExpected<std::string> commit_to_branch(git_repository* repo, const std::string& branch_ref,
                                          const CommitRequest& request);

// 409 when the branch exists; 400 for a name git refuses or one that looks like a sha.
HubExpected<void> create_branch(git_repository* repo, std::string_view name,
                                const std::string& commit);
// `main` cannot be deleted; 404 RevisionNotFound when missing.
HubExpected<void> delete_branch(git_repository* repo, std::string_view name);

// A lightweight tag, or an annotated one when `message` is not empty. 409 when it exists.
HubExpected<void> create_tag(git_repository* repo, std::string_view name,
                             const std::string& commit, std::string_view message);
HubExpected<void> delete_tag(git_repository* repo, std::string_view name);

}  // namespace kernelhub::server
