// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <kernelhub/server/hub_error.hpp>

namespace kernelhub::server {

// The repository types the server stores; spaces are not served.
enum class RepoType { model, dataset, kernel };

// `models`, `datasets`, `kernels`: the part after /api/ and the folder under the root.
std::string_view api_part(RepoType type);
std::optional<RepoType> repo_type_from_api_part(std::string_view part);
// The file-URL prefix: none for models, `datasets/` and `kernels/` otherwise.
std::string_view url_prefix(RepoType type);
// The `type` of a create-repo body: absent (model), "model", "dataset" or "kernel".
std::optional<RepoType> repo_type_from_name(std::string_view name);

struct RepoId {
  RepoType type = RepoType::model;
  std::string ns;
  std::string name;

  std::string id() const { return ns + "/" + name; }
};

// The Hub's rule for each part of a repo id: [A-Za-z0-9_.-], no leading or trailing `-` or
// `.`, no `--` or `..`. It keeps every id a safe single path component on disk.
bool is_valid_id_part(std::string_view part);

// Checks both parts, the 96-character limit and the reserved namespaces (`api`, `models`,
// `datasets`, `spaces`, `kernels`), which model URLs (no type prefix) would shadow.
HubExpected<RepoId> make_repo_id(RepoType type, std::string_view ns, std::string_view name);

// A file path inside a repository, as a commit or a resolve URL names it: relative, `/`
// separated, no empty, `.` or `..` part, no `.git` part, no backslash, no NUL or other control
// character.
HubExpected<void> check_repo_path(std::string_view path);

// A revision as a client sends it (branch, tag, `refs/...` or a sha): not empty, at most 255
// bytes, no control character; name rules proper are git's and are checked on lookup.
HubExpected<void> check_revision(std::string_view revision);

}  // namespace kernelhub::server
