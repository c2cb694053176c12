// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/repository_reader.hpp>

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <optional>

#include <fmt/format.h>

#include <kernelhub/server/git_handles.hpp>
#include <kernelhub/server/repository_ref_cache.hpp>

namespace kernelhub::server {

namespace {

constexpr std::size_t k_min_prefix_digits = 7;

bool is_hex(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
}

// The commit a ref points at (through annotated tags), or nullopt when there is no such ref.
std::optional<std::string> peel_ref_now(git_repository* repo, const std::string& name) {
  auto peeled = peel_ref(repo, name);
  return peeled ? std::optional<std::string>(std::move(peeled->commit)) : std::nullopt;
}

// As peel_ref_now, from this thread's cache of refs whose files did not change
// (repository_ref_cache.hpp): a branch's resolve reads no ref file while the branch stays.
std::optional<std::string> peel_ref_cached(git_repository* repo, const std::string& name) {
  thread_local RefCache cache;
  return cache.peel(repo, name);
}

std::optional<std::string> lookup_commit_prefix(git_repository* repo, std::string_view hex) {
  git_oid oid;
  if (git_oid_fromstrn(&oid, hex.data(), hex.size()) != 0) {
    return std::nullopt;
  }
  git_object* raw = nullptr;
  if (git_object_lookup_prefix(&raw, repo, &oid, hex.size(), GIT_OBJECT_COMMIT) != 0) {
    return std::nullopt;
  }
  const git::Object object(raw);
  return git::to_hex(*git_object_id(object.get()));
}

HubExpected<git::Tree> commit_tree(git_repository* repo, const std::string& sha) {
  git_oid oid;
  git_commit* raw_commit = nullptr;
  if (git_oid_fromstr(&oid, sha.c_str()) != 0 ||
      git_commit_lookup(&raw_commit, repo, &oid) != 0) {
    return revision_not_found(sha);
  }
  const git::Commit commit(raw_commit);
  git_tree* raw_tree = nullptr;
  if (git_commit_tree(&raw_tree, commit.get()) != 0) {
    return git_failure("read a commit's tree");
  }
  return git::Tree(raw_tree);
}

std::uint64_t blob_size(git_odb* odb, const git_oid* oid) {
  std::size_t size = 0;
  git_object_t type = GIT_OBJECT_ANY;
  return git_odb_read_header(&size, &type, odb, oid) == 0 ? size : 0;
}

// The pointer a small blob holds; larger blobs are never read for it.
std::optional<LfsPointer> lfs_pointer_of(git_odb* odb, const git_oid* oid, std::uint64_t size) {
  if (size > k_max_lfs_pointer_bytes || size < 40) {
    return std::nullopt;
  }
  git_odb_object* raw = nullptr;
  if (git_odb_read(&raw, odb, oid) != 0) {
    return std::nullopt;
  }
  const std::string_view text(static_cast<const char*>(git_odb_object_data(raw)),
                              git_odb_object_size(raw));
  auto pointer = parse_lfs_pointer(text);
  git_odb_object_free(raw);
  return pointer;
}

// What read_file's header gives of a blob: its size, and the pointer it holds when it is one.
// A blob's id names its bytes, so this never changes for an id, in any repository: each
// thread keeps the ones it read, as libgit2's loose backend opens and inflates the object
// for each header read (a resolve read every file's header first).
struct BlobHeader {
  std::uint64_t size = 0;
  std::optional<LfsPointer> lfs;
};

struct OidHash {
  std::size_t operator()(const git_oid& oid) const {
    std::size_t hash = 0;
    std::memcpy(&hash, oid.id, sizeof(hash));  // already uniformly distributed
    return hash;
  }
};

struct OidEqual {
  bool operator()(const git_oid& a, const git_oid& b) const { return git_oid_equal(&a, &b) != 0; }
};

constexpr std::size_t k_max_blob_headers = 1024;  // about 150 KiB a thread at most

BlobHeader blob_header(git_odb* odb, const git_oid* oid) {
  thread_local std::unordered_map<git_oid, BlobHeader, OidHash, OidEqual> headers;
  if (const auto it = headers.find(*oid); it != headers.end()) {
    return it->second;
  }
  std::size_t size = 0;
  git_object_t type = GIT_OBJECT_ANY;
  if (git_odb_read_header(&size, &type, odb, oid) != 0) {
    return {};  // not kept: a mirror may fetch the object later
  }
  BlobHeader header{size, lfs_pointer_of(odb, oid, size)};
  if (headers.size() >= k_max_blob_headers) {
    headers.clear();
  }
  headers.emplace(*oid, header);
  return header;
}

bool is_file_entry(const git_tree_entry* entry) {
  return git_tree_entry_type(entry) == GIT_OBJECT_BLOB;
}

struct WalkState {
  std::string base;  // "" or "dir/"
  git_odb* odb = nullptr;
  Recursive recursive = Recursive::no;
  std::vector<TreeItem>* items = nullptr;
};

int collect_entry(const char* root, const git_tree_entry* entry, void* payload) {
  auto* state = static_cast<WalkState*>(payload);
  const git_object_t type = git_tree_entry_type(entry);
  if (type != GIT_OBJECT_BLOB && type != GIT_OBJECT_TREE) {
    return 1;  // submodules are not files of the repository
  }
  TreeItem item;
  item.path = state->base + root + git_tree_entry_name(entry);
  item.is_directory = type == GIT_OBJECT_TREE;
  item.oid = git::to_hex(*git_tree_entry_id(entry));
  if (!item.is_directory && state->odb != nullptr) {
    item.size = blob_size(state->odb, git_tree_entry_id(entry));
    item.lfs = lfs_pointer_of(state->odb, git_tree_entry_id(entry), item.size);
  }
  state->items->push_back(std::move(item));
  // In a pre-order walk, 1 skips the folder's contents.
  return state->recursive == Recursive::yes ? 0 : 1;
}

}  // namespace

HubExpected<std::string> resolve_revision(git_repository* repo, std::string_view revision) {
  const std::string rev(revision);
  if (rev.size() == GIT_OID_HEXSZ && is_hex(rev)) {
    git_oid oid;
    git_commit* raw = nullptr;
    if (git_oid_fromstr(&oid, rev.c_str()) == 0 && git_commit_lookup(&raw, repo, &oid) == 0) {
      git_commit_free(raw);
      return git::to_hex(oid);
    }
    return revision_not_found(rev);
  }
  if (rev.starts_with("refs/")) {
    if (!git::is_valid_ref_name(rev)) {
      return bad_request(fmt::format("invalid revision \"{}\"", rev));
    }
    if (auto sha = peel_ref_cached(repo, rev)) {
      return *sha;
    }
    return revision_not_found(rev);
  }
  const std::string branch = "refs/heads/" + rev;
  if (!git::is_valid_ref_name(branch)) {
    return bad_request(fmt::format("invalid revision \"{}\"", rev));
  }
  if (auto sha = peel_ref_cached(repo, branch)) {
    return *sha;
  }
  if (auto sha = peel_ref_cached(repo, "refs/tags/" + rev)) {
    return *sha;
  }
  if (rev.size() >= k_min_prefix_digits && is_hex(rev)) {
    if (auto sha = lookup_commit_prefix(repo, rev)) {
      return *sha;
    }
  }
  return revision_not_found(rev);
}

HubExpected<std::string> resolve_branch(git_repository* repo, std::string_view revision) {
  std::string ref(revision);
  if (!ref.starts_with("refs/")) {
    ref = "refs/heads/" + ref;
  }
  if (!git::is_valid_ref_name(ref)) {
    return bad_request(fmt::format("invalid branch name \"{}\"", revision));
  }
  if (!ref.starts_with("refs/heads/") || !peel_ref_now(repo, ref)) {
    return revision_not_found(std::string(revision));
  }
  return ref;
}

HubExpected<RepoRefs> list_refs(git_repository* repo) {
  git_reference_iterator* raw = nullptr;
  if (git_reference_iterator_new(&raw, repo) != 0) {
    return git_failure("list references");
  }
  const git::ReferenceIterator iterator(raw);
  RepoRefs refs;
  git_reference* raw_ref = nullptr;
  while (git_reference_next(&raw_ref, iterator.get()) == 0) {
    const git::Reference ref(raw_ref);
    const std::string name = git_reference_name(ref.get());
    const auto target = peel_ref_now(repo, name);
    if (!target) {
      continue;
    }
    if (name.starts_with("refs/heads/")) {
      refs.branches.push_back({name.substr(11), name, *target});
    } else if (name.starts_with("refs/tags/")) {
      refs.tags.push_back({name.substr(10), name, *target});
    } else if (name.starts_with("refs/pr/")) {
      refs.pull_requests.push_back({name.substr(5), name, *target});
    }
  }
  for (auto* list : {&refs.branches, &refs.tags, &refs.pull_requests}) {
    std::sort(list->begin(), list->end(),
              [](const RefEntry& a, const RefEntry& b) { return a.name < b.name; });
  }
  return refs;
}

HubExpected<CommitSummary> commit_summary(git_repository* repo, const std::string& sha) {
  git_oid oid;
  git_commit* raw = nullptr;
  if (git_oid_fromstr(&oid, sha.c_str()) != 0 || git_commit_lookup(&raw, repo, &oid) != 0) {
    return revision_not_found(sha);
  }
  const git::Commit commit(raw);
  const char* summary = git_commit_summary(commit.get());
  return CommitSummary{sha, static_cast<std::int64_t>(git_commit_time(commit.get())),
                       summary != nullptr ? summary : ""};
}

HubExpected<std::vector<TreeItem>> list_tree(git_repository* repo, const std::string& commit,
                                             std::string_view path, Recursive recursive,
                                             Sizes sizes) {
  git::Tree root = KH_HUB_TRY(commit_tree(repo, commit));
  git::Odb odb;
  if (sizes == Sizes::read) {
    git_odb* raw_odb = nullptr;
    if (git_repository_odb(&raw_odb, repo) != 0) {
      return git_failure("open the object database");
    }
    odb.reset(raw_odb);
  }
  std::vector<TreeItem> items;
  WalkState state{"", odb.get(), recursive, &items};
  git::Tree subtree;
  git_tree* walked = root.get();
  if (!path.empty()) {
    git_tree_entry* raw_entry = nullptr;
    const std::string path_text(path);
    if (git_tree_entry_bypath(&raw_entry, root.get(), path_text.c_str()) != 0) {
      return entry_not_found(path_text);
    }
    const git::TreeEntry entry(raw_entry);
    if (is_file_entry(entry.get())) {
      TreeItem item{path_text, false, git::to_hex(*git_tree_entry_id(entry.get())), 0, {}};
      if (odb) {
        item.size = blob_size(odb.get(), git_tree_entry_id(entry.get()));
        item.lfs = lfs_pointer_of(odb.get(), git_tree_entry_id(entry.get()), item.size);
      }
      items.push_back(std::move(item));
      return items;
    }
    git_tree* raw_subtree = nullptr;
    if (git_tree_lookup(&raw_subtree, repo, git_tree_entry_id(entry.get())) != 0) {
      return entry_not_found(path_text);
    }
    subtree.reset(raw_subtree);
    walked = subtree.get();
    state.base = path_text + "/";
  }
  if (git_tree_walk(walked, GIT_TREEWALK_PRE, &collect_entry, &state) != 0) {
    return git_failure("walk a tree");
  }
  return items;
}

HubExpected<FileContent> read_file(const std::shared_ptr<git_repository>& repo,
                                   const std::string& commit, std::string_view path,
                                   Content content, std::uint64_t whole_up_to) {
  git::Tree root = KH_HUB_TRY(commit_tree(repo.get(), commit));
  const std::string path_text(path);
  git_tree_entry* raw_entry = nullptr;
  if (git_tree_entry_bypath(&raw_entry, root.get(), path_text.c_str()) != 0) {
    return entry_not_found(path_text);
  }
  const git::TreeEntry entry(raw_entry);
  if (!is_file_entry(entry.get())) {
    return entry_not_found(path_text);
  }
  const git_oid* oid = git_tree_entry_id(entry.get());
  FileContent file;
  file.oid = git::to_hex(*oid);
  const bool limited = whole_up_to != UINT64_MAX;
  if (content == Content::header || limited) {
    git_odb* raw_odb = nullptr;
    if (git_repository_odb(&raw_odb, repo.get()) != 0) {
      return git_failure("open the object database");
    }
    const git::Odb odb(raw_odb);
    BlobHeader header = blob_header(odb.get(), oid);
    file.size = header.size;
    file.lfs = std::move(header.lfs);
    if (content == Content::header || file.size > whole_up_to) {
      return file;
    }
  }
  git_blob* raw_blob = nullptr;
  if (git_blob_lookup(&raw_blob, repo.get(), oid) != 0) {
    return git_failure(fmt::format("read \"{}\"", path_text));
  }
  // The blob borrows the repository, so the owner keeps both; libgit2's buffer is sent as is.
  struct Holder {
    std::shared_ptr<git_repository> repo;
    git::Blob blob;
  };
  auto holder = std::make_shared<Holder>(Holder{repo, git::Blob(raw_blob)});
  file.size = static_cast<std::uint64_t>(git_blob_rawsize(holder->blob.get()));
  file.data = static_cast<const char*>(git_blob_rawcontent(holder->blob.get()));
  if (!limited && file.size <= k_max_lfs_pointer_bytes) {
    file.lfs = parse_lfs_pointer(std::string_view(file.data, file.size));
  }
  file.owner = std::move(holder);
  return file;
}

std::string repository_folder(git_repository* repo) { return git_repository_path(repo); }

bool tracked_by_lfs(git_repository* repo, const std::string& commit, const std::string& path) {
  git_attr_options options = GIT_ATTR_OPTIONS_INIT;
  // A bare repository has no work tree or index: the commit's own .gitattributes decide
  // (with the repository's info/attributes), not the machine's system-wide file.
  options.flags = GIT_ATTR_CHECK_INDEX_ONLY | GIT_ATTR_CHECK_NO_SYSTEM |
                  GIT_ATTR_CHECK_INCLUDE_COMMIT;
  if (git_oid_fromstr(&options.attr_commit_id, commit.c_str()) != 0) {
    return false;
  }
  const char* value = nullptr;
  if (git_attr_get_ext(&value, repo, &options, path.c_str(), "filter") != 0) {
    return false;
  }
  return git_attr_value(value) == GIT_ATTR_VALUE_STRING && std::string_view(value) == "lfs";
}

}  // namespace kernelhub::server
