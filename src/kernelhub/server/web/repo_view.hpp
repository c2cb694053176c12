// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <kernelhub/server/handlers.hpp>
#include <kernelhub/server/repository_reader.hpp>

// What the repository pages share: the repository opened for a reader, its URL, its version
// branches, and the parts every page of it draws (title, tabs, card, load instructions).
namespace kernelhub::server::web {

struct RepoView {
  RepoId id;
  OpenRepository repo;
  std::string base;  // URL path: "/kernels/ns/name", "/ns/name"
  std::vector<PublishedKey> trusted_keys;  // the hub's [signing] keys, to check signatures
  // The checks of uploaded variants still to run (null: none are queued).
  const VariantCheckQueue* variant_checks = nullptr;
};

// The repository if the reader may see it; a private one without a valid token is the same
// 404 as a missing one, so a page never tells which private names exist.
HubExpected<RepoView> open_view(handlers::Context& ctx, const RepoId& id);

// "Kernels", "Models" or "Datasets": a listing's heading and the first crumb of a repo page.
std::string_view type_label(RepoType type);

// Branches named v<N>, newest (largest N) first.
struct VersionBranch {
  std::uint64_t number = 0;
  RefEntry ref;
};
std::vector<VersionBranch> version_branches(const RepoRefs& refs);

// "v2" when the repository has version branches, else "main" when it has that branch, else
// the first branch; nullopt for a repository with no branch.
std::optional<std::pair<std::string, std::string>> default_revision(const RepoRefs& refs);

// "<rev>" for a branch or tag name, the first 12 digits of a full commit id.
std::string revision_label(const std::string& revision);

// The heading (id, private chip) and the tabs (card, files, commits, community: the
// discussions and pull requests) of every repo page.
enum class Tab { card, files, commits, community, none };
std::string repo_header(const RepoView& view, const std::string& revision, Tab active);

// The breadcrumbs: the type's listing, then the repository.
std::vector<std::pair<std::string, std::string>> repo_crumbs(const RepoView& view);

// README.md of `commit` rendered (relative links go to that revision's files), or a note
// when there is none.
std::string card_html(const RepoView& view, const std::string& commit,
                      const std::string& revision);

// The kernel part of a revision: its variant matrix and its benchmark chart and table.
std::string kernel_revision_html(const RepoView& view, const std::string& commit,
                                 const std::string& revision);

}  // namespace kernelhub::server::web
