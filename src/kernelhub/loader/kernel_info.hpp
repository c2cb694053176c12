// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <kernelhub/cache/hub_cache.hpp>
#include <kernelhub/hub/hub_types.hpp>
#include <kernelhub/util/expected.hpp>

// `kernelhub info`: what the reference's `kernels info` says about a kernel (loader.md §1.2),
// from a local kernel directory or a Hub repository. Unlike the reference, a Hub lookup with
// HF_HUB_OFFLINE=1 is answered from the cache alone (refs/, trees/, snapshots/) with no
// request at all (loader.md §5.2: the reference still lists the Hub tree offline).
namespace kernelhub::loader {

// The kernel-wide fields of one variant's metadata.json, as `kernels info` shows them.
struct KernelSummary {
  std::string name;
  std::uint64_t version = 0;
  std::optional<std::string> kernels_minver;  // "kernels-minver", normalised "0.12.1"
  std::string license;
  std::optional<std::string> upstream;  // the parsed URL's serialisation, as the reference's
  std::optional<std::string> source;    // bindings expose it ("ssh://git@h/a.git")
  std::vector<std::string> python_depends;

  friend bool operator==(const KernelSummary&, const KernelSummary&) = default;
};

struct KernelInfo {
  // A Hub lookup sets repo_id and revision (the name asked for: "v2", "main", a sha); a local
  // one sets path (spelt as Python's str(Path(...)) spells it).
  std::optional<std::string> repo_id;
  std::optional<std::string> revision;
  std::optional<std::string> path;
  // Absent when no variant's metadata.json could be read; the reference then prints "-".
  std::optional<KernelSummary> summary;
  std::vector<std::string> backends;  // sorted, one per backend name across the variants

  // Beyond the reference's fields (not printed by render_info_json): what was looked at.
  std::optional<std::string> commit;
  std::vector<std::string> variants;     // variant folders that parse, sorted
  std::optional<std::string> metadata_variant;
  std::vector<std::string> warnings;     // "You are using version 1 of ..."
};

struct InfoRequest {
  std::optional<unsigned> version;       // at most one of version and revision
  std::optional<std::string> revision;
};

// A revision chosen the way `kernels info` chooses it: `version` gives the branch "v<N>",
// `revision` is taken as given, neither gives the newest "v<N>" or else "main".
struct ResolvedRevision {
  std::string label;   // "v2", "main", or the revision as given
  std::string commit;  // the 40-hex commit it names (online: the server's; offline: refs/)
  std::optional<std::string> warning;
};

util::Expected<ResolvedRevision> resolve_info_revision(const cache::HubCache& cache,
                                                       const hub::RepoId& repo,
                                                       const InfoRequest& request);

// The variant folder names under build/ of `commit`: from its tree listing (cached in
// trees/<sha>.json, else fetched online), else offline from the snapshot's build/ folders.
util::Expected<std::vector<std::string>> variant_names_at(const cache::HubCache& cache,
                                                          const hub::RepoId& repo,
                                                          const std::string& commit);

// Local mode: the variants in `<repo_path>/build`, the metadata of the first (sorted) one
// that has a metadata.json. Errors when there is no variant or that metadata is invalid.
util::Expected<KernelInfo> local_kernel_info(const std::filesystem::path& repo_path);

// Hub mode. Online the metadata is that of the first variant (sorted; the reference takes an
// arbitrary one) and a failure to read it leaves `summary` empty, as in the reference;
// offline it is the first variant whose metadata.json is in the cache, else an error naming
// the repository, the revision and the cache folder.
util::Expected<KernelInfo> hub_kernel_info(const cache::HubCache& cache, const hub::RepoId& repo,
                                           const InfoRequest& request);

// metadata.json text -> the summary; errors as the metadata reader words them.
util::Expected<KernelSummary> read_kernel_summary(std::string_view text, const std::string& file_name);

// The sorted backend names of the variant names that parse: "cuda", "cpu", "universal".
std::vector<std::string> variant_backends(std::span<const std::string> names);

// Python's str(pathlib.Path(text)): "." components and repeated or trailing slashes dropped.
std::string python_path_string(std::string_view text);

// The reference's --json object, key for key and in its order.
nlohmann::ordered_json render_info_json(const KernelInfo& info);
// The reference's human output: "Repository: ...", "Revision: ...", ..., "Backends: ...".
std::string render_info_text(const KernelInfo& info);

}  // namespace kernelhub::loader
