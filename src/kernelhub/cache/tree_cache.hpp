// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <kernelhub/util/expected.hpp>

// `trees/<commit>.json`: the complete file listing of one commit, in the format
// huggingface_hub 2.4 writes (`_tree_cache.py`, format_version 1). Python trusts it to skip
// the tree request and to decide offline whether a snapshot is complete, so it must always
// list the whole commit, never just the files one download kept.
namespace kernelhub::cache {

struct TreeFile {
  std::uint64_t size = 0;
  std::string blob_id;  // git blob sha1 (of the LFS pointer for LFS files)
  std::optional<std::string> lfs_sha256;
  std::optional<std::uint64_t> lfs_size;
  std::optional<std::string> xet_hash;

  // The name of this file's blob in blobs/: the LFS sha256 when there is one, else the git
  // sha1, which is what the Hub's ETag of the file is (hub-api.md §5.3).
  const std::string& blob_name() const { return lfs_sha256 ? *lfs_sha256 : blob_id; }

  friend bool operator==(const TreeFile&, const TreeFile&) = default;
};

// Path in the repository -> file; std::map's byte order is Python's sorted() on UTF-8 text.
using TreeListing = std::map<std::string, TreeFile>;

inline constexpr int k_tree_cache_format_version = 1;

// The file's JSON text, byte for byte as Python's `json.dump(data, f, indent=1)` writes it.
std::string render_tree_cache(const TreeListing& listing);

// nullopt for a missing file, another format_version or a corrupt file: all of which Python
// ignores and re-fetches.
std::optional<TreeListing> read_tree_cache(const std::filesystem::path& file);

util::Expected<void> write_tree_cache(const std::filesystem::path& file, const TreeListing& listing);

}  // namespace kernelhub::cache
