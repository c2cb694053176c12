// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/repository_history.hpp>

#include <optional>

#include <fmt/format.h>

#include <kernelhub/server/git_handles.hpp>

namespace kernelhub::server {

namespace {

// A listing asks for at most 1000 paths; 2000 commits of a first-parent chain keep one
// request in the tens of milliseconds.
constexpr std::size_t k_max_history_walk = 2000;

// The id of the entry at `path` in `tree`, or nullopt when there is none.
std::optional<git_oid> entry_id(git_tree* tree, const std::string& path) {
  if (tree == nullptr) {
    return std::nullopt;
  }
  git_tree_entry* raw = nullptr;
  if (git_tree_entry_bypath(&raw, tree, path.c_str()) != 0) {
    return std::nullopt;
  }
  const git::TreeEntry entry(raw);
  return *git_tree_entry_id(entry.get());
}

CommitSummary summary_of(git_commit* commit) {
  const char* title = git_commit_summary(commit);
  return CommitSummary{git::to_hex(*git_commit_id(commit)),
                       static_cast<std::int64_t>(git_commit_time(commit)),
                       title != nullptr ? title : ""};
}

}  // namespace

std::map<std::string, CommitSummary> last_commits(git_repository* repo, const std::string& commit,
                                                 const std::vector<std::string>& paths) {
  std::map<std::string, CommitSummary> found;
  git_oid start;
  git_commit* raw_commit = nullptr;
  if (git_oid_fromstr(&start, commit.c_str()) != 0 ||
      git_commit_lookup(&raw_commit, repo, &start) != 0) {
    return found;
  }
  git::Commit current(raw_commit);
  // What each unresolved path is at `current`; paths missing at the start are dropped.
  std::map<std::string, git_oid> pending;
  {
    git_tree* raw_tree = nullptr;
    if (git_commit_tree(&raw_tree, current.get()) != 0) {
      return found;
    }
    const git::Tree tree(raw_tree);
    for (const auto& path : paths) {
      if (const auto id = entry_id(tree.get(), path)) {
        pending.emplace(path, *id);
      }
    }
  }
  for (std::size_t walked = 0; !pending.empty(); ++walked) {
    git_commit* raw_parent = nullptr;
    const bool has_parent = git_commit_parentcount(current.get()) > 0 &&
                            git_commit_parent(&raw_parent, current.get(), 0) == 0;
    git::Commit parent(raw_parent);
    git::Tree parent_tree;
    if (has_parent) {
      git_tree* raw_tree = nullptr;
      if (git_commit_tree(&raw_tree, parent.get()) == 0) {
        parent_tree.reset(raw_tree);
      }
    }
    const bool give_up = !has_parent || walked + 1 >= k_max_history_walk;
    for (auto it = pending.begin(); it != pending.end();) {
      const auto before = entry_id(parent_tree.get(), it->first);
      if (give_up || !before || git_oid_cmp(&*before, &it->second) != 0) {
        found.emplace(it->first, summary_of(current.get()));
        it = pending.erase(it);
      } else {
        ++it;
      }
    }
    if (give_up) {
      break;
    }
    current = std::move(parent);
  }
  return found;
}

HubExpected<TreeItem> path_item(git_repository* repo, const std::string& commit,
                                const std::string& path) {
  auto items = KH_HUB_TRY(list_tree(repo, commit, path, Recursive::no, Sizes::read));
  // list_tree gives a file itself, or a folder's children: a folder's own entry is read from
  // its parent's listing.
  if (items.size() == 1 && items[0].path == path && !items[0].is_directory) {
    return items[0];
  }
  const std::size_t slash = path.rfind('/');
  const std::string parent = slash == std::string::npos ? "" : path.substr(0, slash);
  for (auto& item : KH_HUB_TRY(list_tree(repo, commit, parent, Recursive::no, Sizes::skip))) {
    if (item.path == path) {
      return item;
    }
  }
  return entry_not_found(path);
}

}  // namespace kernelhub::server
