// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/cache/hub_cache.hpp>
#include <kernelhub/loader/kernel_lock.hpp>
#include <kernelhub/loader/publisher_trust.hpp>
#include <kernelhub/types/kernel_dependency.hpp>
#include <kernelhub/util/expected.hpp>

// Writing kernels.lock from the Hub (`kernelhub lock`) and checking downloaded variants
// against it (`kernelhub download PROJECT`). loader.md §4.3, §1.2.
namespace kernelhub::loader {

// `[tool.kernels.dependencies]` of <project_dir>/pyproject.toml ("org/name" = <major>), in the
// order the file lists them. A missing file or table, or a value that is not a non-negative
// integer, is an error located in the file (the reference crashes with AttributeError).
util::Expected<std::vector<types::KernelDependency>> read_project_dependencies(
    const std::filesystem::path& project_dir);

// Locks `dependencies` and, as the reference does, every kernel their variants' metadata.json
// lists under kernel-depends (each variant's metadata is fetched): a version is resolved to
// its v<N> branch's commit, a revision to the commit it names. A dependency cycle is an error
// ("cyclic kernel dependency detected: org/x"). For LockFormat::legacy, every build/torch*
// variant also gets its git_lfs_concat hash from the commit's tree listing.
//
// Each kernel's publisher is checked before anything of it is fetched, as the reference's
// `kernels lock` and `get_kernel` check it (publisher_trust.hpp: the same ValueError texts),
// unless `trust` covers it; offline no overview can be read, so a kernel `trust` does not
// cover cannot be locked ("could not verify publisher trust status"), as with the reference.
//
// Difference from the reference, on purpose: a revision that is not a full commit sha is
// resolved instead of failing to parse as an object id.
util::Expected<KernelLockFile> lock_dependencies(const cache::HubCache& cache,
                                                 const std::vector<types::KernelDependency>& dependencies,
                                                 LockFormat format, const RemoteCodeTrust& trust = {});

struct ProjectLock {
  std::filesystem::path file;  // <project_dir>/kernels.lock, written atomically
  KernelLockFile lock;
};

util::Expected<ProjectLock> lock_project(const cache::HubCache& cache, const std::filesystem::path& project_dir,
                                         LockFormat format, const RemoteCodeTrust& trust = {});

// The outcome of checking one downloaded variant against its lock.
struct VariantVerification {
  std::string repo_id;
  std::string commit;
  std::string variant;
  std::string expected;       // "sha256-…"
  std::string expected_from;  // "kernels.lock" or "the tree listing" (dependency-format locks)
  std::string actual;         // the same hash over the files' bytes in the cache
  // Repository paths whose cached bytes do not hash to the listing's id, or that are missing.
  std::vector<std::string> changed_files;
  std::vector<std::string> missing_files;

  bool ok() const { return expected == actual && changed_files.empty() && missing_files.empty(); }
};

// Recomputes the git_lfs_concat hash of the variant at `variant_path` (a snapshot folder,
// symlinks followed) from the bytes of its files: the git blob sha1 of each, or the sha256 for
// files the commit's listing says are LFS, and compares it with the lock's hash for `variant`
// (legacy locks) or, when the lock has none, with the hash of the commit's tree listing. The
// listing comes from trees/<commit>.json when cached (no request then). An unreadable listing
// is an error; a mismatch is a result with ok() false. The reference never does this check.
util::Expected<VariantVerification> verify_locked_variant(const cache::HubCache& cache,
                                                          const KernelLockEntry& entry,
                                                          std::string_view variant,
                                                          const std::filesystem::path& variant_path);

}  // namespace kernelhub::loader
