// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <kernelhub/metadata/metadata.hpp>
#include <kernelhub/util/expected.hpp>

// The kernel folder's git state, for the kernel id and metadata provenance (builder.md §3).
// The one place in the builder that talks to libgit2.
namespace kernelhub::builder {

struct KernelGitState {
  std::string tree_id;          // HEAD's tree id, full hex
  metadata::GitStatus status;   // HEAD's commit; dirty when tracked files changed
  std::int64_t commit_time = 0;  // HEAD's committer time (seconds since the epoch, UTC)
  // The "origin" remote's URL with any user and password removed (they are credentials, not
  // where the source came from); nullopt without such a remote.
  std::optional<std::string> origin;
};

// `url` without the "user:password@" of a URL with a scheme; scp-like "git@host:path" and
// local paths unchanged.
std::string url_without_credentials(const std::string& url);

// Nullopt when `dir` is not inside a git repository or HEAD has no commit yet (a freshly
// `init`ed kernel): there is then no tree to name the build after. Untracked files and
// submodules do not make the state dirty.
std::optional<KernelGitState> read_git_state(const std::filesystem::path& dir);

// The top folder of the working tree `dir` is in; nullopt outside git.
std::optional<std::filesystem::path> git_work_tree(const std::filesystem::path& dir);

// Clones `url` (a URL git understands, or a local repository's folder) into the new folder
// `dest` and checks out `commit` there, detached; the clone's "origin" remote is then set to
// `origin` (nullopt: removed), so a build of it records that origin rather than where the
// bytes came from. Fails naming the URL and libgit2's message, or that the commit is not in it.
util::Expected<void> clone_at_commit(const std::string& url, const std::string& commit,
                                     const std::filesystem::path& dest,
                                     const std::optional<std::string>& origin);

}  // namespace kernelhub::builder
