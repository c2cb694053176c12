// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/repository_merge.hpp>

#include <cstdint>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include <kernelhub/server/git_handles.hpp>

namespace kernelhub::server {

namespace {

using Diff = git::Owned<git_diff, git_diff_free>;

HubExpected<git::Commit> ref_commit(git_repository* repo, const std::string& ref) {
  git_reference* raw_ref = nullptr;
  if (git_reference_lookup(&raw_ref, repo, ref.c_str()) != 0) {
    return revision_not_found(ref);
  }
  const git::Reference reference(raw_ref);
  git_object* raw = nullptr;
  if (git_reference_peel(&raw, reference.get(), GIT_OBJECT_COMMIT) != 0) {
    return revision_not_found(ref);
  }
  return git::Commit(reinterpret_cast<git_commit*>(raw));
}

// The tree of `commit`'s merge base with `other`, or none when they share no history.
git::Tree fork_tree(git_repository* repo, git_commit* commit, git_commit* other) {
  git_oid fork;
  if (git_merge_base(&fork, repo, git_commit_id(commit), git_commit_id(other)) != 0) {
    return {};
  }
  git_commit* raw_fork = nullptr;
  if (git_commit_lookup(&raw_fork, repo, &fork) != 0) {
    return {};
  }
  const git::Commit fork_commit(raw_fork);
  git_tree* raw_tree = nullptr;
  if (git_commit_tree(&raw_tree, fork_commit.get()) != 0) {
    return {};
  }
  return git::Tree(raw_tree);
}

// `build/<variant>` of a path under a variant folder, else empty.
std::string variant_folder(std::string_view path) {
  constexpr std::string_view k_build = "build/";
  if (!path.starts_with(k_build)) {
    return "";
  }
  const auto slash = path.find('/', k_build.size());
  if (slash == std::string_view::npos || slash == k_build.size()) {
    return "";
  }
  return std::string(path.substr(0, slash));
}

// The variant folders the pull request changed since it forked from the base.
HubExpected<std::set<std::string>> changed_variant_folders(git_repository* repo,
                                                           git_commit* base, git_commit* head) {
  const git::Tree fork = fork_tree(repo, base, head);
  git_tree* raw_head_tree = nullptr;
  if (git_commit_tree(&raw_head_tree, head) != 0) {
    return git_failure("read the pull request's tree");
  }
  const git::Tree head_tree(raw_head_tree);
  git_diff_options options = GIT_DIFF_OPTIONS_INIT;
  const char* build = "build";
  options.pathspec = {const_cast<char**>(&build), 1};
  git_diff* raw_diff = nullptr;
  if (git_diff_tree_to_tree(&raw_diff, repo, fork.get(), head_tree.get(), &options) != 0) {
    return git_failure("diff the pull request");
  }
  const Diff diff(raw_diff);
  std::set<std::string> folders;
  for (std::size_t i = 0; i < git_diff_num_deltas(diff.get()); ++i) {
    const git_diff_delta* delta = git_diff_get_delta(diff.get(), i);
    for (const char* path : {delta->old_file.path, delta->new_file.path}) {
      if (auto folder = variant_folder(path != nullptr ? path : ""); !folder.empty()) {
        folders.insert(std::move(folder));
      }
    }
  }
  return folders;
}

struct FolderWalk {
  git_index* index = nullptr;
  std::string folder;
  bool failed = false;
};

int add_head_entry(const char* root, const git_tree_entry* entry, void* payload) {
  auto* walk = static_cast<FolderWalk*>(payload);
  if (git_tree_entry_type(entry) != GIT_OBJECT_BLOB) {
    return 0;
  }
  const std::string path = fmt::format("{}/{}{}", walk->folder, root, git_tree_entry_name(entry));
  git_index_entry added{};
  added.mode = static_cast<std::uint32_t>(git_tree_entry_filemode(entry));
  added.id = *git_tree_entry_id(entry);
  added.path = path.c_str();
  if (git_index_add(walk->index, &added) != 0) {
    walk->failed = true;
    return -1;
  }
  return 0;
}

// Build outputs are not mergeable text (issue 22 §5): a variant folder the pull request
// changed is taken whole from the pull request, whatever the base did to it since, because
// the reviewer approved that build and a mix of two builds is neither. Conflicts elsewhere
// (sources, the card) stay.
HubExpected<void> take_pull_request_variants(git_repository* repo, git_index* index,
                                             git_commit* base, git_commit* head) {
  const auto folders = KH_HUB_TRY(changed_variant_folders(repo, base, head));
  if (folders.empty()) {
    return {};
  }
  git_tree* raw_head_tree = nullptr;
  if (git_commit_tree(&raw_head_tree, head) != 0) {
    return git_failure("read the pull request's tree");
  }
  const git::Tree head_tree(raw_head_tree);
  for (const auto& folder : folders) {
    // Stage 0 holds merged entries, 1-3 a conflict's ancestor, ours and theirs.
    for (int stage = 0; stage <= 3; ++stage) {
      if (git_index_remove_directory(index, folder.c_str(), stage) != 0) {
        return git_failure(fmt::format("replace \"{}\"", folder));
      }
    }
    git_tree_entry* raw_entry = nullptr;
    if (git_tree_entry_bypath(&raw_entry, head_tree.get(), folder.c_str()) != 0) {
      continue;  // the pull request removed the variant
    }
    const git::TreeEntry entry(raw_entry);
    if (git_tree_entry_type(entry.get()) != GIT_OBJECT_TREE) {
      continue;
    }
    git_tree* raw_folder = nullptr;
    if (git_tree_lookup(&raw_folder, repo, git_tree_entry_id(entry.get())) != 0) {
      return git_failure(fmt::format("read \"{}\"", folder));
    }
    const git::Tree folder_tree(raw_folder);
    FolderWalk walk{index, folder, false};
    git_tree_walk(folder_tree.get(), GIT_TREEWALK_PRE, &add_head_entry, &walk);
    if (walk.failed) {
      return git_failure(fmt::format("take \"{}\" from the pull request", folder));
    }
  }
  return {};
}

// The three-way merge of both heads as an in-memory index, the pull request's variant
// folders taken whole.
HubExpected<git::Index> merged_index(git_repository* repo, git_commit* base, git_commit* head) {
  git_merge_options options = GIT_MERGE_OPTIONS_INIT;
  git_index* raw = nullptr;
  if (git_merge_commits(&raw, repo, base, head, &options) != 0) {
    return git_failure("merge the pull request");
  }
  git::Index index(raw);
  KH_HUB_TRY(take_pull_request_variants(repo, index.get(), base, head));
  return index;
}

std::vector<std::string> conflicted_paths(git_index* index) {
  std::vector<std::string> paths;
  if (!git_index_has_conflicts(index)) {
    return paths;
  }
  git_index_conflict_iterator* raw = nullptr;
  if (git_index_conflict_iterator_new(&raw, index) != 0) {
    return {"(unknown)"};
  }
  const git::Owned<git_index_conflict_iterator, git_index_conflict_iterator_free> iterator(raw);
  const git_index_entry* ancestor = nullptr;
  const git_index_entry* ours = nullptr;
  const git_index_entry* theirs = nullptr;
  while (git_index_conflict_next(&ancestor, &ours, &theirs, iterator.get()) == 0) {
    const git_index_entry* any = ours != nullptr ? ours : theirs != nullptr ? theirs : ancestor;
    if (any != nullptr) {
      paths.emplace_back(any->path);
    }
  }
  return paths;
}

struct DiffText {
  std::string text;
  std::size_t max_bytes = 0;
};

// Appends one line of the patch; stops the print (non-zero) once the text is long enough.
int append_line(const git_diff_delta*, const git_diff_hunk*, const git_diff_line* line,
                void* payload) {
  auto* diff = static_cast<DiffText*>(payload);
  std::string* out = &diff->text;
  if (out->size() > diff->max_bytes) {
    return 1;
  }
  if (line->origin == GIT_DIFF_LINE_CONTEXT || line->origin == GIT_DIFF_LINE_ADDITION ||
      line->origin == GIT_DIFF_LINE_DELETION) {
    out->push_back(line->origin);
  }
  out->append(line->content, line->content_len);
  return 0;
}

}  // namespace

HubExpected<void> create_ref(git_repository* repo, const std::string& ref,
                             const std::string& commit) {
  git_oid oid;
  if (git_oid_fromstr(&oid, commit.c_str()) != 0) {
    return revision_not_found(commit);
  }
  git_reference* raw = nullptr;
  const int created = git_reference_create(&raw, repo, ref.c_str(), &oid, /*force=*/0,
                                           "pull request: opened");
  if (created == GIT_EEXISTS) {
    return hub_fail(409, "", fmt::format("\"{}\" already exists", ref));
  }
  if (created != 0) {
    return git_failure(fmt::format("create \"{}\"", ref));
  }
  git_reference_free(raw);
  return {};
}

HubExpected<void> delete_ref(git_repository* repo, const std::string& ref) {
  git_reference* raw = nullptr;
  if (git_reference_lookup(&raw, repo, ref.c_str()) != 0) {
    return {};
  }
  const git::Reference reference(raw);
  if (git_reference_delete(reference.get()) != 0) {
    return git_failure(fmt::format("delete \"{}\"", ref));
  }
  return {};
}

HubExpected<std::vector<std::string>> merge_conflicts(git_repository* repo,
                                                      const std::string& base_ref,
                                                      const std::string& head_ref) {
  const git::Commit base = KH_HUB_TRY(ref_commit(repo, base_ref));
  const git::Commit head = KH_HUB_TRY(ref_commit(repo, head_ref));
  const git::Index index = KH_HUB_TRY(merged_index(repo, base.get(), head.get()));
  return conflicted_paths(index.get());
}

HubExpected<MergeOutcome> merge_refs(git_repository* repo, const std::string& base_ref,
                                     const std::string& head_ref, const std::string& message) {
  const git::Commit base = KH_HUB_TRY(ref_commit(repo, base_ref));
  const git::Commit head = KH_HUB_TRY(ref_commit(repo, head_ref));
  const git::Index index = KH_HUB_TRY(merged_index(repo, base.get(), head.get()));
  MergeOutcome outcome;
  outcome.conflicts = conflicted_paths(index.get());
  if (!outcome.conflicts.empty()) {
    return outcome;
  }
  git_oid tree_id;
  if (git_index_write_tree_to(&tree_id, index.get(), repo) != 0) {
    return git_failure("write the merged tree");
  }
  git_tree* raw_tree = nullptr;
  if (git_tree_lookup(&raw_tree, repo, &tree_id) != 0) {
    return git_failure("read the merged tree");
  }
  const git::Tree tree(raw_tree);
  git_signature* raw_signature = nullptr;
  if (git_signature_now(&raw_signature, "kernelhub", "kernelhub@localhost") != 0) {
    return git_failure("make a signature");
  }
  const git::Signature signature(raw_signature);
  const git_commit* parents[] = {base.get(), head.get()};
  git_oid commit_id;
  if (git_commit_create(&commit_id, repo, nullptr, signature.get(), signature.get(), nullptr,
                        message.c_str(), tree.get(), 2, parents) != 0) {
    return git_failure("write the merge commit");
  }
  git_reference* raw_moved = nullptr;
  const int moved = git_reference_create_matching(&raw_moved, repo, base_ref.c_str(), &commit_id,
                                                  /*force=*/1, git_commit_id(base.get()),
                                                  "merge: pull request");
  if (moved == GIT_EMODIFIED) {
    return hub_fail(412, "", fmt::format("\"{}\" moved during the merge; retry", base_ref));
  }
  if (moved != 0) {
    return git_failure(fmt::format("move \"{}\"", base_ref));
  }
  git_reference_free(raw_moved);
  outcome.commit = git::to_hex(commit_id);
  return outcome;
}

namespace {

// The patch from `before` (none: an empty tree) to `after`, cut at `max_bytes`.
HubExpected<std::string> tree_patch(git_repository* repo, git_tree* before, git_tree* after,
                                    std::size_t max_bytes) {
  git_diff* raw_diff = nullptr;
  git_diff_options options = GIT_DIFF_OPTIONS_INIT;
  if (git_diff_tree_to_tree(&raw_diff, repo, before, after, &options) != 0) {
    return git_failure("diff the trees");
  }
  const Diff diff(raw_diff);
  DiffText printed{{}, max_bytes};
  git_diff_print(diff.get(), GIT_DIFF_FORMAT_PATCH, &append_line, &printed);
  std::string& text = printed.text;
  if (text.size() > max_bytes) {
    const std::size_t cut = text.rfind('\n', max_bytes);
    text.resize(cut == std::string::npos ? 0 : cut + 1);
    text += fmt::format("(diff cut at {} bytes)\n", max_bytes);
  }
  return std::move(text);
}

HubExpected<git::Tree> commit_tree(git_repository* repo, const std::string& sha) {
  git_oid oid;
  git_commit* raw_commit = nullptr;
  if (git_oid_fromstr(&oid, sha.c_str()) != 0 || git_commit_lookup(&raw_commit, repo, &oid) != 0) {
    return revision_not_found(sha);
  }
  const git::Commit commit(raw_commit);
  git_tree* raw_tree = nullptr;
  if (git_commit_tree(&raw_tree, commit.get()) != 0) {
    return git_failure(fmt::format("read the tree of {}", sha));
  }
  return git::Tree(raw_tree);
}

}  // namespace

HubExpected<std::string> pull_request_diff(git_repository* repo, const std::string& base_ref,
                                           const std::string& head_ref, std::size_t max_bytes) {
  const git::Commit base = KH_HUB_TRY(ref_commit(repo, base_ref));
  const git::Commit head = KH_HUB_TRY(ref_commit(repo, head_ref));
  const git::Tree fork = fork_tree(repo, base.get(), head.get());
  git_tree* raw_head_tree = nullptr;
  if (git_commit_tree(&raw_head_tree, head.get()) != 0) {
    return git_failure("read the pull request's tree");
  }
  const git::Tree head_tree(raw_head_tree);
  return tree_patch(repo, fork.get(), head_tree.get(), max_bytes);
}

HubExpected<std::string> commits_diff(git_repository* repo, const std::optional<std::string>& before,
                                      const std::string& after, std::size_t max_bytes) {
  git::Tree before_tree;
  if (before) {
    before_tree = KH_HUB_TRY(commit_tree(repo, *before));
  }
  const git::Tree after_tree = KH_HUB_TRY(commit_tree(repo, after));
  return tree_patch(repo, before_tree.get(), after_tree.get(), max_bytes);
}

}  // namespace kernelhub::server
