// SPDX-License-Identifier: Apache-2.0
#pragma once

// Owning pointers for the libgit2 objects the repository_* files use. Included only by those
// .cpp files, so libgit2 stays out of every other header.
#include <atomic>
#include <memory>
#include <random>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <git2.h>

#include <kernelhub/server/hub_error.hpp>

namespace kernelhub::server::git {

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* object) const { Free(object); }
};

template <typename T, void (*Free)(T*)>
using Owned = std::unique_ptr<T, Deleter<T, Free>>;

using Reference = Owned<git_reference, git_reference_free>;
using Commit = Owned<git_commit, git_commit_free>;
using Tree = Owned<git_tree, git_tree_free>;
using TreeEntry = Owned<git_tree_entry, git_tree_entry_free>;
using Blob = Owned<git_blob, git_blob_free>;
using Object = Owned<git_object, git_object_free>;
using Index = Owned<git_index, git_index_free>;
using Signature = Owned<git_signature, git_signature_free>;
using Odb = Owned<git_odb, git_odb_free>;
using Config = Owned<git_config, git_config_free>;
using TreeBuilder = Owned<git_treebuilder, git_treebuilder_free>;
using ReferenceIterator = Owned<git_reference_iterator, git_reference_iterator_free>;

// The last libgit2 error message, for 500 answers and logs.
inline std::string last_error() {
  const git_error* error = git_error_last();
  return error != nullptr && error->message != nullptr ? error->message : "unknown libgit2 error";
}

// The repository config key that marks a repository private (read by the store, set by the
// mirror's fetch).
inline constexpr const char* k_private_key = "kernelhub.private";

inline bool is_valid_ref_name(const std::string& name) {
  int valid = 0;
  return git_reference_name_is_valid(&valid, name.c_str()) == 0 && valid != 0;
}

// A suffix that makes a temporary folder's name unique among processes and threads (a new
// repository is made in `.tmp-<name>-<suffix>` and renamed into place).
inline std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  std::random_device random;
  return fmt::format("{:08x}{:04x}", random(), counter.fetch_add(1) & 0xffff);
}

inline std::string to_hex(const git_oid& oid) {
  char text[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(text, sizeof(text), &oid);
  return text;
}

}  // namespace kernelhub::server::git

namespace kernelhub::server {

// A 500 naming what failed and libgit2's message.
inline tl::unexpected<HubError> git_failure(std::string_view what) {
  return hub_fail(500, "", fmt::format("cannot {}: {}", what, git::last_error()));
}

}  // namespace kernelhub::server
