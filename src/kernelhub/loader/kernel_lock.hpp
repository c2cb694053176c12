// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/cache/tree_cache.hpp>
#include <kernelhub/util/diagnostic.hpp>
#include <kernelhub/util/expected.hpp>

// `kernels.lock`, the file `kernels lock PROJECT` writes next to pyproject.toml (loader.md
// §4.3, §4.4). Two formats exist in the wild and both are read:
//
//   dependency (kernels >= 0.17, kernels_data `KernelLocks`): a JSON array of
//     {"dependency": {"repo-id": "org/x", "version": 1 | "revision": "r"},
//      "lock": {"commit": "<40|64 hex>"}}
//     sorted by (repo id, version before revision), no trailing newline. This is what the
//     installed reference writes and the only format its `download`/`load_kernel` read.
//   legacy (older kernels releases, `lockfile.py`/`locking.py`): a JSON array of
//     {"repo_id", "sha", "variants": {"<variant>": {"hash": "sha256-…",
//      "hash_type": "git_lfs_concat"}}}
//     in pyproject order, Python's json.dump(indent=2), no trailing newline.
//
// Only the legacy format carries per-variant content hashes; the reference never checks them.
namespace kernelhub::loader {

enum class LockFormat { dependency, legacy };

inline constexpr std::string_view k_git_lfs_concat = "git_lfs_concat";

struct VariantLock {
  std::string hash;  // "sha256-<hex>"
  std::string hash_type = std::string(k_git_lfs_concat);

  friend bool operator==(const VariantLock&, const VariantLock&) = default;
};

struct KernelLockEntry {
  std::string repo_id;
  // The dependency as pyproject (or a kernel's metadata) asked for it; exactly one is set in
  // the dependency format, neither in the legacy format (which does not record it).
  std::optional<std::uint64_t> version;
  std::optional<std::string> revision;
  std::string commit;                           // "lock.commit" / legacy "sha", lowercase
  std::map<std::string, VariantLock> variants;  // legacy format only

  friend bool operator==(const KernelLockEntry&, const KernelLockEntry&) = default;
};

struct KernelLockFile {
  LockFormat format = LockFormat::dependency;
  std::vector<KernelLockEntry> entries;

  // The first entry for `repo_id` (the reference's linear search), nullptr when not locked.
  const KernelLockEntry* find(std::string_view repo_id) const;

  friend bool operator==(const KernelLockFile&, const KernelLockFile&) = default;
};

// Reads either format (told apart by the first entry's keys; an empty array reads as the
// dependency format). Every problem goes to `sink` as "<json path>: <problem>" under
// `file_name`, e.g. "[1].lock.commit: invalid git object id ..."; nullopt when there was any.
// As the reference: unknown keys of the dependency format are errors, a repeated dependency
// is an error, commits must be full object ids (read back lowercase).
std::optional<KernelLockFile> read_kernel_lock(std::string_view text, const std::string& file_name,
                                               util::DiagnosticSink& sink);

// The same, with every problem joined into one message, one per line. A missing file says so.
util::Expected<KernelLockFile> read_kernel_lock_file(const std::filesystem::path& path);

// The file's text byte for byte as the reference writes `lock.format`: dependency entries
// sorted as kernels_data sorts them, legacy entries in the order given.
std::string render_kernel_lock(const KernelLockFile& lock);

// The legacy per-variant hash (`git_lfs_concat`) of build/<variant>/ in a commit's listing:
// for every file under it except *.pyc and __pycache__/, the pair (path relative to the
// variant folder, hash), hash being the LFS sha256 or else the git blob sha1; the pairs sorted
// bytewise, then SHA-256 over path bytes followed by the raw hash bytes. "sha256-<hex>";
// nullopt when the listing has no file under build/<variant>/.
std::optional<std::string> variant_hash(const cache::TreeListing& listing, std::string_view variant);

// The same over (relative path, hex hash) pairs already collected.
std::string git_lfs_concat_hash(std::vector<std::pair<std::string, std::string>> files);

// The legacy `variants` table of a commit: every build/torch* variant of the listing.
std::map<std::string, VariantLock> legacy_variant_locks(const cache::TreeListing& listing);

}  // namespace kernelhub::loader
