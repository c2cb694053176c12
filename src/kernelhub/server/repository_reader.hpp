// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/server/hub_error.hpp>
#include <kernelhub/server/lfs_pointer.hpp>

struct git_repository;

namespace kernelhub::server {

// Read-only queries on one opened repository. Commit ids cross this API as 40 lower-case hex
// digits, the only form the Python client treats as a commit.

// A branch, tag or pull-request ref and the commit it points at (tags peeled).
struct RefEntry {
  std::string name;
  std::string ref;
  std::string target_commit;
};

struct RepoRefs {
  std::vector<RefEntry> branches;
  std::vector<RefEntry> tags;
  std::vector<RefEntry> pull_requests;
};

struct TreeItem {
  std::string path;  // relative to the repository root
  bool is_directory = false;
  std::string oid;   // git blob or tree sha1
  std::uint64_t size = 0;  // of the blob: for an LFS file, of its pointer
  // The LFS object a file's blob points at (read only with Sizes::read).
  std::optional<LfsPointer> lfs;
};

// A file's bytes, kept alive (with the repository handle) by `owner` while they are sent.
struct FileContent {
  std::string oid;
  std::uint64_t size = 0;
  const char* data = nullptr;  // null when only the header was read
  std::shared_ptr<const void> owner;
  // Set when the blob is an LFS pointer (read with the header too: pointers are small).
  std::optional<LfsPointer> lfs;
};

struct CommitSummary {
  std::string sha;
  std::int64_t time = 0;  // seconds since the epoch
  std::string title;
};

// Resolution order: a full 40-hex sha (any commit in history); `refs/...` exactly; a branch;
// a tag (a branch wins over a tag of the same name); a hex prefix of at least 7 digits.
// Unknown: 404 RevisionNotFound; not a valid git ref name: 400.
HubExpected<std::string> resolve_revision(git_repository* repo, std::string_view revision);

// The full branch ref (`refs/heads/x`) that `revision` names, or RevisionNotFound when it
// names no branch (commits and branch updates only ever go to a branch).
HubExpected<std::string> resolve_branch(git_repository* repo, std::string_view revision);

HubExpected<RepoRefs> list_refs(git_repository* repo);

HubExpected<CommitSummary> commit_summary(git_repository* repo, const std::string& sha);

// The entries under `path` ("" for the root) at `commit`: its children, or with `recursive`
// every descendant (pre-order). File sizes are read only with `with_sizes`. A path that does
// not exist gives 404 EntryNotFound; a path naming a file gives that one file.
enum class Recursive { no, yes };
enum class Sizes { skip, read };
HubExpected<std::vector<TreeItem>> list_tree(git_repository* repo, const std::string& commit,
                                             std::string_view path, Recursive recursive,
                                             Sizes sizes);

// The file at `path` in `commit`: EntryNotFound when missing or a folder. With
// `Content::header`, only the oid and size are read (for HEAD, whatever the blob's size);
// with `Content::bytes`, a blob larger than `whole_up_to` comes with its header only too
// (`data` null), for the caller to stream.
enum class Content { header, bytes };
HubExpected<FileContent> read_file(const std::shared_ptr<git_repository>& repo,
                                   const std::string& commit, std::string_view path,
                                   Content content,
                                   std::uint64_t whole_up_to = UINT64_MAX);

// The repository's folder (`<name>.git/`): where its LFS store lives beside git's objects.
std::string repository_folder(git_repository* repo);

// Whether the `.gitattributes` of `commit` give `path` the `filter=lfs` attribute (the rule
// `git lfs track` writes), as git would read them: nested files, patterns and macros
// included. Errors count as no.
bool tracked_by_lfs(git_repository* repo, const std::string& commit, const std::string& path);

}  // namespace kernelhub::server
