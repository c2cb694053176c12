// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/loader/file_state.hpp>
#include <kernelhub/util/expected.hpp>

// A variant folder that passed every check of a Hub load (its files present, each blob
// against its etag, the files against metadata.json's digest) gets a seal: the stat of the
// folder, of each folder in it and of each file (the blob behind each link), in one small file
// under <cache>/.kernelhub/sealed/<repo folder>/<commit>/<variant>. A later load whose every
// entry still stats the same skips those checks: one read and a stat per entry, where the
// checks cost a link read, a blob stat and a stamp read per file, a walk per check and a parse
// of the cached tree and of metadata.json (issue 25: most of a warm load's work before the
// import).
//
// It holds what the blob stamps hold (blob_verify.hpp), for the whole folder at once: a
// rewritten, replaced or re-pointed file moves ctime or the inode of what its path reaches, and
// an entry added, removed or renamed moves its folder's mtime and ctime. A seal is only written
// when nothing moved while the checks ran, and only once every entry's last change is a few
// seconds old, so a change within the same file-system clock tick as the seal cannot hide
// behind it (the "racy" case git's index guards against the same way). Bytecode is left out,
// as the digest leaves it out: the loader never imports it, and the reference may write it.
// The seal lives in the cache, like the stamps: whoever can write the cache can forge it;
// require_signature rehashes everything regardless.
namespace kernelhub::loader {

struct SealedEntry : FileState {
  std::string relative_path;  // "." for the variant folder, then "/"-separated paths

  friend bool operator==(const SealedEntry&, const SealedEntry&) = default;
};

struct VariantSeal {
  std::vector<SealedEntry> entries;

  // The variant folder as it is now, or nullopt when it cannot be sealed: an entry that does
  // not stat, or a link to a folder (nothing behind it would be covered).
  static std::optional<VariantSeal> take(const std::filesystem::path& variant_path);

  // Whether every entry's last change is at least `settle_seconds` before `now_ns` (the
  // wall clock, which the file system's timestamps follow).
  bool settled(long long now_ns, int settle_seconds = 2) const;

  std::string render() const;
  static std::optional<VariantSeal> parse(std::string_view text);

  friend bool operator==(const VariantSeal&, const VariantSeal&) = default;
};

// <seal_root>/<repo folder name>/<commit>/<variant folder name>; the seal root of a cache is
// <cache>/.kernelhub/sealed.
std::filesystem::path seal_path(const std::filesystem::path& seal_root,
                                const std::filesystem::path& repo_folder,
                                std::string_view commit, std::string_view variant);

// Whether the seal at `seal_file` still describes `variant_path`, entry by entry. False when
// there is none, it does not parse, or anything moved.
bool seal_holds(const std::filesystem::path& variant_path, const std::filesystem::path& seal_file);

// Writes `before` (taken before the checks) when every entry has been still for
// `settle_seconds` and the folder still holds exactly that; a seal that cannot be written only
// costs the checks next time.
void write_seal(const std::filesystem::path& variant_path, const std::filesystem::path& seal_file,
                const VariantSeal& before, int settle_seconds = 2);

// Drops the seal, for whatever removes or replaces a file of the variant.
void remove_seal(const std::filesystem::path& seal_file);

}  // namespace kernelhub::loader
