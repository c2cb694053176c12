// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <kernelhub/util/expected.hpp>

namespace kernelhub::server {

// What a mirror (upstream_mirror.hpp) does with git: fetch a repository from another hub over
// git's smart HTTP with libgit2, into a bare repository of this one, keeping the upstream's
// commit ids.

// Where to fetch from: `url` is the repository's clone URL (`<hub>/[kernels/|datasets/]ns/name.git`);
// `token`, when not empty, goes in `Authorization: Bearer`, as huggingface.co takes it.
struct UpstreamSource {
  std::string url;
  std::string token;
};

struct FetchSummary {
  // Refs made, moved or removed by this fetch.
  std::size_t changed = 0;
  // The upstream's default branch (`refs/heads/main`), when it advertised one.
  std::string default_branch;
};

// Fetches every branch, tag and `refs/pr/*` of `source` into the bare repository at `dir`, then
// makes those refs the upstream's (new ones made, moved ones moved, ones the upstream dropped
// removed) in one ref transaction, after every object they name is stored: a reader sees the
// refs before the fetch or after it, never a ref to a missing object. HEAD follows the
// upstream's default branch. The caller serialises fetches into one repository.
util::Expected<FetchSummary> fetch_into(const std::filesystem::path& dir,
                                        const UpstreamSource& source);

// A new empty bare repository at `dir` (which must not exist), marked as a mirror of
// `upstream`, private or not.
util::Expected<void> init_mirror_repository(const std::filesystem::path& dir,
                                            const std::string& upstream, bool is_private);

// The upstream a repository mirrors (git config `kernelhub.mirror`), or nullopt for a repository
// of this hub's own: one made here, or one the operator made local by unsetting the key.
std::optional<std::string> mirrored_upstream(const std::filesystem::path& dir);

// Sets `kernelhub.private` of the repository at `dir`.
util::Expected<void> set_private_flag(const std::filesystem::path& dir, bool is_private);

}  // namespace kernelhub::server
