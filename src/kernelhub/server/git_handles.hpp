// SPDX-License-Identifier: Apache-2.0
#pragma once

// Owning pointers for the libgit2 objects the repository_* files use. Included only by those
// .cpp files, so libgit2 stays out of every other header.
#include <memory>
#include <string>

#include <git2.h>

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

inline std::string to_hex(const git_oid& oid) {
  char text[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(text, sizeof(text), &oid);
  return text;
}

}  // namespace kernelhub::server::git
