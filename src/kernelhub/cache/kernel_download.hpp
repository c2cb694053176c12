// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <kernelhub/cache/hub_cache.hpp>
#include <kernelhub/hub/hub_types.hpp>
#include <kernelhub/util/expected.hpp>
#include <kernelhub/variants/acceptance.hpp>
#include <kernelhub/variants/system.hpp>

// Kernel versions and variant downloads on top of HubCache, as the `kernels` loader does them
// (loader.md §4.1, §5): versions are `v<int>` branches, the variant is chosen by the loader's
// acceptance and preference rules, and only build/<variant>/ is downloaded (or all of
// build/). Offline, versions come from the cached refs/v<N> files, which we write whenever we
// resolve a version so that kernels itself works offline on a cache we filled.
namespace kernelhub::cache {

struct KernelVersion {
  unsigned number = 0;
  std::string commit;

  friend bool operator==(const KernelVersion&, const KernelVersion&) = default;
};

// "v3" -> 3; nullopt for any other name. Only digits are accepted after the "v".
std::optional<unsigned> parse_version_branch(std::string_view name);

// Online: the repository's `v<int>` branches. Offline: refs/v<int> in the kernels-- folder,
// then the legacy models-- folder. Sorted by number; empty when the repository has none.
util::Expected<std::vector<KernelVersion>> kernel_versions(const HubCache& cache, const hub::RepoId& repo);

// The commit of version `number`, with the reference's errors: "Version 4 not found,
// available versions: 1, 2" or, offline with no cached versions, "Version 4 of 'org/k' is not
// available in the local cache and Hugging Face Hub is in offline mode...".
util::Expected<KernelVersion> resolve_kernel_version(const HubCache& cache, const hub::RepoId& repo,
                                                     unsigned number);

// The variant folder names under build/ in a commit's listing, sorted.
std::vector<std::string> variant_names(const TreeListing& listing);

// The variant names of a commit: from its listing online, from the build/ folders of the
// local snapshot offline (as the loader does when it resolves offline).
util::Expected<std::vector<std::string>> kernel_variants(const HubCache& cache, const hub::RepoId& repo,
                                                         const std::string& commit);

struct KernelDownloadRequest {
  std::optional<unsigned> version;
  std::optional<std::string> revision;  // exactly one of version and revision
  bool all_variants = false;
  // The machine the variant is chosen for; may be left out with all_variants (no trace then),
  // which spares the caller the system probe (it starts Python to ask torch).
  std::optional<variants::SystemInfo> system;
};

struct KernelDownload {
  std::string commit;
  std::vector<std::string> variants;  // every variant the commit has
  variants::Resolution resolution;    // the decisions for `system`, best first
  std::optional<std::string> chosen;  // the variant downloaded, unless all_variants
  std::filesystem::path path;         // snapshots/<commit>/build/<chosen>, or the snapshot
  SnapshotResult snapshot;
  // The reference's warning when a version below the newest is asked for: "You are using
  // version 1 of 'org/k', but version 2 is available."
  std::optional<std::string> warning;
};

// Resolves the version or revision, chooses the variant (unless all_variants) and downloads
// it. When no variant fits, the error is the reference's "Cannot find a build variant for
// this system in ..." with the decision trace.
util::Expected<KernelDownload> download_kernel(const HubCache& cache, const hub::RepoId& repo,
                                               const KernelDownloadRequest& request);

}  // namespace kernelhub::cache
