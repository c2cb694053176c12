// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <kernelhub/cache/pattern_filter.hpp>
#include <kernelhub/cache/repo_cache.hpp>
#include <kernelhub/cache/tree_cache.hpp>
#include <kernelhub/hub/hub_client.hpp>
#include <kernelhub/util/expected.hpp>

// The C++ equivalents of huggingface_hub's `snapshot_download` and `hf_hub_download` over the
// shared cache (hub-api.md §4-6). Online, the sequence is the reference's, minus the HEAD
// per file: a blob's name and size come from the commit's tree listing, which is what the
// server's ETag is for every Hub-compatible server (§5.3). Offline (the client's endpoint
// says HF_HUB_OFFLINE) they make no request at all and answer from refs/ and snapshots/.
namespace kernelhub::cache {

struct SnapshotResult {
  std::filesystem::path path;  // snapshots/<commit>
  std::string commit;
  std::size_t files = 0;       // files of the commit that passed the filter
  std::size_t downloaded = 0;  // blobs this call stored (empty ones need no transfer)
  std::uint64_t bytes_downloaded = 0;
};

class HubCache {
 public:
  // `client` must outlive this object. `parallel_downloads` blobs are fetched at once.
  HubCache(std::filesystem::path cache_root, const hub::HubClient& client,
           std::size_t parallel_downloads = 8);

  const std::filesystem::path& root() const { return m_root; }
  RepoCache repo(const hub::RepoRef& repo) const { return RepoCache(m_root, repo); }
  bool offline() const { return m_client.endpoint().offline; }
  const hub::HubClient& client() const { return m_client; }

  // The commit `revision` names: itself when 40-hex, else asked of the server (repo info),
  // falling back to refs/<revision> when the server cannot be reached. Writes the ref.
  util::Expected<std::string> resolve_revision(const hub::RepoRef& repo, std::string_view revision) const;

  // The complete file listing of `commit`: trees/<commit>.json when cached, else the server's
  // recursive tree, which is then cached. Offline, only the cached file.
  util::Expected<TreeListing> listing(const hub::RepoRef& repo, std::string_view commit) const;

  // Every file of `revision` that passes `filter` linked under snapshots/<commit>/, blobs
  // fetched in parallel (ClientOptions::parallel_downloads threads), each under its lock.
  util::Expected<SnapshotResult> snapshot_download(const hub::RepoRef& repo, std::string_view revision,
                                                   const PatternFilter& filter) const;

  // One file (HEAD, then GET when its blob is missing): snapshots/<commit>/<path>. A file
  // the server says is missing is recorded under .no_exist/ as Python does.
  util::Expected<std::filesystem::path> file_download(const hub::RepoRef& repo,
                                                      std::string_view revision,
                                                      std::string_view path) const;

 private:
  util::Expected<SnapshotResult> offline_snapshot(const hub::RepoRef& repo, std::string_view revision,
                                                  const PatternFilter& filter,
                                                  const std::string& online_error) const;
  util::Expected<std::filesystem::path> offline_file(const hub::RepoRef& repo, std::string_view revision,
                                                     std::string_view path,
                                                     const std::string& online_error) const;

  // trees/<commit>.json, parsed once per object: one load reads a commit's listing to choose
  // its variant and again to fetch it, and a commit's listing never changes.
  std::optional<TreeListing> cached_listing(const RepoCache& cache, std::string_view commit) const;

  std::filesystem::path m_root;
  const hub::HubClient& m_client;
  std::size_t m_parallel_downloads;
  struct TreeMemo;
  std::shared_ptr<TreeMemo> m_trees;
};

// The message of a lookup that the cache cannot answer while offline, naming the repository,
// the revision and the cache folder.
std::string offline_miss_message(const hub::RepoRef& repo, std::string_view revision,
                                 const std::filesystem::path& cache_root);

}  // namespace kernelhub::cache
