// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <kernelhub/server/repository_reader.hpp>
#include <kernelhub/server/web/repo_view.hpp>

// The files that differ between two commits, by blob id, with their sizes on each side: what
// a commit page and a pull request page show (names and sizes, not a line diff: most files of
// a kernel repository are binaries).
namespace kernelhub::server::web {

struct FileChange {
  std::string path;
  std::optional<TreeItem> before;  // absent: the file was added
  std::optional<TreeItem> after;   // absent: the file was deleted
};

// Sorted by path. `before` empty compares with an empty tree (a root commit).
HubExpected<std::vector<FileChange>> file_changes(const RepoView& view,
                                                  const std::optional<std::string>& before,
                                                  const std::string& after);

// The "Files changed" table; names of files that exist after link to their page at
// `after_revision`.
std::string file_changes_html(const RepoView& view, const std::vector<FileChange>& changes,
                              const std::string& after_revision);

}  // namespace kernelhub::server::web
