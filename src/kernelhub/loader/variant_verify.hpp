// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/cache/hub_cache.hpp>
#include <kernelhub/hub/hub_types.hpp>
#include <kernelhub/loader/kernel_info.hpp>
#include <kernelhub/metadata/digest.hpp>
#include <kernelhub/util/expected.hpp>
#include <kernelhub/variants/acceptance.hpp>
#include <kernelhub/variants/system.hpp>

// `kernelhub verify`: the digest step of the reference's `verify_variant` (loader.md §4.5,
// steps 3 and 5-7) without the sigstore signature: rehash the variant's files and compare
// them with the digest its metadata.json records. A signature proves who wrote metadata.json;
// this proves the files on disk are the ones that metadata.json describes.
namespace kernelhub::loader {

enum class VerifyStatus {
  ok,
  metadata_missing,  // no metadata.json in the variant
  metadata_invalid,  // metadata.json does not parse
  digest_missing,    // metadata.json has no "digest"
  digest_mismatch,   // the files differ from the digest: see `violations`
  unreadable,        // a file could not be hashed (dangling link, no permission)
  // The files match, but the variant holds what the digest does not cover: bytecode or a link
  // to a folder (`uncovered`). Other loaders may run it (kernelhub's never imports bytecode and
  // refuses links to folders), so the folder is not the signed one.
  uncovered_files,
};

// "ok", "metadata-missing", "metadata-invalid", "digest-missing", "digest-mismatch",
// "unreadable", "uncovered-files".
std::string_view to_string(VerifyStatus status);

// The reference's class names: "MissingFile", "UnknownFile", "HashMismatch",
// "AlgorithmMismatch".
std::string_view violation_kind_name(metadata::DigestViolation::Kind kind);

struct VariantCheck {
  std::filesystem::path path;
  std::string variant;  // the folder's name
  VerifyStatus status = VerifyStatus::ok;
  std::vector<metadata::DigestViolation> violations;
  std::vector<std::string> uncovered;  // metadata::VariantFiles::uncovered
  std::string detail;      // why metadata_invalid / unreadable
  std::size_t files = 0;   // files the digest lists (ok and digest_mismatch)

  bool passed() const { return status == VerifyStatus::ok; }
};

// Checks one variant folder. Never fails: every outcome is a status.
VariantCheck verify_variant_digest(const std::filesystem::path& variant_dir);

// The variant folders a local path names, sorted: the path itself when it holds a
// metadata.json, else the variant-named folders of <path>/build, else those of the path.
util::Expected<std::vector<std::filesystem::path>> local_variant_dirs(const std::filesystem::path& path);

struct InstalledRequest {
  InfoRequest revision;       // as `kernelhub info` resolves it
  bool all_variants = false;  // every installed variant, not just the one this system loads
  std::optional<variants::SystemInfo> system;  // required unless all_variants
};

struct InstalledVariants {
  ResolvedRevision revision;
  std::vector<std::filesystem::path> dirs;        // to verify
  std::optional<variants::Resolution> resolution; // the choice among the installed ones
};

// The variants of a Hub kernel that are in the cache (snapshots/<commit>/build/*); nothing is
// downloaded. Without all_variants only the one the loader would pick among them, as the
// reference's offline load picks among the local build/ folders.
util::Expected<InstalledVariants> installed_variants(const cache::HubCache& cache,
                                                     const hub::RepoId& repo,
                                                     const InstalledRequest& request);

}  // namespace kernelhub::loader
