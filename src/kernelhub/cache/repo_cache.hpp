// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/hub/hub_types.hpp>
#include <kernelhub/util/expected.hpp>

// One repository's folder in the huggingface_hub cache (hub-api.md §5.2-5.3):
//   <cache>/<type>s--<ns>--<name>/{blobs/<etag>, refs/<rev>, snapshots/<commit>/<path>,
//                                  trees/<commit>.json, .no_exist/<commit>/<path>}
//   <cache>/.locks/<type>s--<ns>--<name>/<etag>.lock
// Every name that comes from a server (revision, path, etag) is checked before it becomes a
// path, so a hostile server cannot make us write outside the cache.
namespace kernelhub::cache {

// "kernels--org--name".
std::string repo_folder_name(const hub::RepoRef& repo);

// Relative, "/"-separated, no empty, "." or ".." part, no NUL or backslash.
bool is_safe_repo_path(std::string_view path);
// A ref name usable as refs/<name>: a safe path that is not a 40-hex commit.
bool is_safe_revision(std::string_view revision);
// A blob name: non-empty, no "/", "\\" or NUL, not "." or "..".
bool is_safe_etag(std::string_view etag);

// `CACHEDIR.TAG`, as huggingface_hub writes it into the cache root.
inline constexpr std::string_view k_cachedir_tag =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by huggingface_hub.\n"
    "# For information about cache directory tags, see:\n"
    "#\thttps://bford.info/cachedir/\n";

class RepoCache {
 public:
  RepoCache(std::filesystem::path cache_root, const hub::RepoRef& repo);

  const std::filesystem::path& cache_root() const { return m_root; }
  const std::filesystem::path& folder() const { return m_folder; }
  const std::string& folder_name() const { return m_folder_name; }

  std::filesystem::path blob_path(std::string_view etag) const;
  // Where a blob is downloaded before it is verified and renamed to blob_path. One name per
  // blob (not per process) so an interrupted download is resumed by the next run; the lock
  // makes sure only one writer uses it at a time.
  std::filesystem::path partial_blob_path(std::string_view etag) const;
  std::filesystem::path lock_path(std::string_view etag) const;
  std::filesystem::path ref_path(std::string_view revision) const;
  std::filesystem::path snapshot_dir(std::string_view commit) const;
  std::filesystem::path snapshot_file(std::string_view commit, std::string_view path) const;
  std::filesystem::path tree_file(std::string_view commit) const;
  std::filesystem::path no_exist_file(std::string_view commit, std::string_view path) const;

  // The commit refs/<revision> names (trailing whitespace ignored), or nullopt.
  std::optional<std::string> read_ref(std::string_view revision) const;
  // Writes refs/<revision> with no newline (Python reads it unstripped), atomically, and only
  // when it changes. A 40-hex revision is its own commit and gets no ref, as in Python.
  util::Expected<void> write_ref(std::string_view revision, std::string_view commit) const;
  // The ref names under refs/ ("main", "v1", "refs/pr/1"), sorted.
  std::vector<std::string> list_refs() const;

  // The commit a revision means without asking a server: itself when 40-hex, else the ref.
  std::optional<std::string> resolve_offline(std::string_view revision) const;

  bool has_blob(std::string_view etag) const;
  // snapshots/<commit>/<path> -> ../(...)/blobs/<etag>, relative, replacing what was there.
  util::Expected<void> link_snapshot_file(std::string_view commit, std::string_view path,
                                          std::string_view etag) const;
  // The empty .no_exist/<commit>/<path> marker of a file the server said is not there.
  util::Expected<void> mark_no_exist(std::string_view commit, std::string_view path) const;
  // CACHEDIR.TAG in the cache root, unless present.
  void tag_cache_root() const;

 private:
  std::filesystem::path m_root;
  std::string m_folder_name;
  std::filesystem::path m_folder;
};

}  // namespace kernelhub::cache
