// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cache/hub_cache.hpp>

#include <algorithm>
#include <map>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <kernelhub/cache/blob_store.hpp>
#include <kernelhub/hub/hub_url.hpp>
#include <kernelhub/hub/progress_bar.hpp>

namespace kernelhub::cache {

namespace fs = std::filesystem;

namespace {

// Failures after which Python looks in the cache instead (hub-api.md §6): everything but
// an answer that the revision or file does not exist, and our own local errors.
bool may_use_cache(const hub::HubError& error) {
  switch (error.kind) {
    case hub::ErrorKind::revision_not_found:
    case hub::ErrorKind::entry_not_found:
    case hub::ErrorKind::invalid_argument:
    case hub::ErrorKind::checksum:
    case hub::ErrorKind::io:
      return false;
    default:
      return true;
  }
}

util::Error as_error(const hub::HubError& error) {
  return util::Error{error.message};
}

bool present(const fs::path& path) {
  std::error_code ec;
  return fs::exists(path, ec);  // follows the snapshot symlink: false when its blob is gone
}

struct PendingFile {
  std::string path;
  const TreeFile* file = nullptr;
};

}  // namespace

std::string offline_miss_message(const hub::RepoRef& repo, std::string_view revision,
                                 const fs::path& cache_root) {
  return fmt::format("revision \"{}\" of {} repository \"{}\" is not in the cache \"{}\" and "
                     "offline mode is on (HF_HUB_OFFLINE); download it once with network access",
                     revision, hub::repo_type_name(repo.type), repo.id.str(), cache_root.string());
}

struct HubCache::TreeMemo {
  std::mutex mutex;
  std::map<fs::path, TreeListing> listings;  // by tree file
};

HubCache::HubCache(fs::path cache_root, const hub::HubClient& client, std::size_t parallel_downloads)
    : m_root(std::move(cache_root)),
      m_client(client),
      m_parallel_downloads(parallel_downloads),
      m_trees(std::make_shared<TreeMemo>()) {}

std::optional<TreeListing> HubCache::cached_listing(const RepoCache& cache,
                                                    std::string_view commit) const {
  auto file = cache.tree_file(commit);
  {
    const std::lock_guard lock(m_trees->mutex);
    if (const auto found = m_trees->listings.find(file); found != m_trees->listings.end()) {
      return found->second;
    }
  }
  auto listing = read_tree_cache(file);
  if (listing) {
    const std::lock_guard lock(m_trees->mutex);
    m_trees->listings.emplace(std::move(file), *listing);
  }
  return listing;
}

util::Expected<std::string> HubCache::resolve_revision(const hub::RepoRef& repo,
                                                       std::string_view revision) const {
  if (hub::is_commit_sha(revision)) {
    return std::string(revision);
  }
  const auto cache = this->repo(repo);
  if (offline()) {
    if (auto commit = cache.resolve_offline(revision)) {
      return *commit;
    }
    return util::fail(offline_miss_message(repo, revision, m_root));
  }
  auto info = m_client.repo_info(repo, revision);
  if (!info) {
    if (may_use_cache(info.error())) {
      if (auto commit = cache.resolve_offline(revision)) {
        return *commit;
      }
    }
    return tl::unexpected(as_error(info.error()));
  }
  if (!hub::is_commit_sha(info->sha)) {
    return util::fail(fmt::format("the server named the commit of \"{}\" \"{}\", not a 40-hex sha",
                                  revision, info->sha));
  }
  if (auto done = cache.write_ref(revision, info->sha); !done) {
    return tl::unexpected(done.error());
  }
  return info->sha;
}

util::Expected<TreeListing> HubCache::listing(const hub::RepoRef& repo, std::string_view commit) const {
  const auto cache = this->repo(repo);
  if (auto cached = cached_listing(cache, commit)) {
    return std::move(*cached);
  }
  if (offline()) {
    return util::fail(offline_miss_message(repo, commit, m_root));
  }
  auto entries = m_client.list_tree(repo, commit, {}, hub::Recursive::yes);
  if (!entries) {
    return tl::unexpected(as_error(entries.error()));
  }
  TreeListing listing;
  std::vector<std::string> unsafe;
  for (const auto& entry : *entries) {
    if (entry.kind != hub::TreeEntry::Kind::file) {
      continue;
    }
    // Kept in the listing (the tree cache lists the whole commit), but never fetched:
    // snapshot_download refuses such a file when it is wanted and skips it otherwise.
    if (!is_safe_repo_path(entry.path)) {
      unsafe.push_back(entry.path);
    }
    TreeFile file;
    file.size = entry.size;
    file.blob_id = entry.oid;
    if (entry.lfs) {
      file.lfs_sha256 = entry.lfs->sha256;
      file.lfs_size = entry.lfs->size;
      file.size = entry.lfs->size;
    }
    listing.emplace(entry.path, std::move(file));
  }
  if (auto done = write_tree_cache(cache.tree_file(commit), listing); !done) {
    return tl::unexpected(done.error());
  }
  for (const auto& path : unsafe) {
    fmt::print(stderr,
               "kernelhub: warning: {} at {} lists the unsafe path \"{}\"; it is never "
               "downloaded\n",
               repo.id.str(), commit, path);
  }
  return listing;
}

util::Expected<SnapshotResult> HubCache::snapshot_download(const hub::RepoRef& repo,
                                                           std::string_view revision,
                                                           const PatternFilter& filter) const {
  if (offline()) {
    return offline_snapshot(repo, revision, filter, {});
  }
  auto commit = resolve_revision(repo, revision);
  if (!commit) {
    // resolve_revision already tried refs/; a 40-hex revision never gets here.
    return tl::unexpected(commit.error());
  }
  const auto cache = this->repo(repo);
  auto files = listing(repo, *commit);
  if (!files) {
    if (present(cache.snapshot_dir(*commit))) {
      return offline_snapshot(repo, *commit, filter, files.error().message);
    }
    return tl::unexpected(files.error());
  }
  cache.tag_cache_root();

  SnapshotResult result;
  result.commit = *commit;
  result.path = cache.snapshot_dir(*commit);
  std::vector<PendingFile> pending;
  std::vector<std::string> refused;
  for (const auto& [path, file] : *files) {
    if (!filter.matches(path)) {
      continue;
    }
    if (!is_safe_repo_path(path)) {
      refused.push_back(path);
      continue;
    }
    ++result.files;
    if (!present(cache.snapshot_file(*commit, path))) {
      pending.push_back({path, &file});
    }
  }

  if (!refused.empty()) {
    // One of the wanted files cannot be stored without leaving the snapshot folder (or being
    // misread on another system): the snapshot would be incomplete, so nothing is fetched.
    return util::fail(fmt::format(
        "refusing to download \"{}\" from {} at {}: the path is unsafe (absolute, with "
        "\"..\", \".\", an empty part, a backslash or a NUL){}",
        refused.front(), repo.id.str(), *commit,
        refused.size() > 1 ? fmt::format(", and {} more such file(s)", refused.size() - 1)
                           : std::string()));
  }
  hub::ProgressBar bar(fmt::format("{}: {} file(s)", repo.id.str(), pending.size()),
                      /*enabled=*/!pending.empty());
  for (const auto& item : pending) {
    bar.add_total(item.file->size);
  }
  // Each worker takes the next file; blobs shared by two paths meet at the blob's lock.
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> downloaded{0};
  std::atomic<std::uint64_t> bytes{0};
  std::mutex errors_mutex;
  std::vector<std::string> errors;
  const auto work = [&] {
    for (std::size_t i = next++; i < pending.size(); i = next++) {
      const auto& item = pending[i];
      const auto& etag = item.file->blob_name();
      const BlobRequest request{etag, item.file->size, /*verify_content=*/false};
      auto outcome = ensure_blob(cache, request, [&](const fs::path& partial) -> util::Expected<void> {
        if (item.file->size == 0) {
          return {};  // Python never GETs an empty file either
        }
        // The tree gave the blob's name and size, so no HEAD is needed: GET the resolve URL.
        hub::DownloadTask task{
            repo, *commit, item.path, partial,
            hub::FileMetadata{*commit, etag, item.file->size,
                              hub::resolve_url(m_client.endpoint().url, repo, *commit, item.path)}};
        std::uint64_t seen = 0;
        auto done = m_client.download(task, [&](std::uint64_t received, std::uint64_t) {
          if (received > seen) {
            bar.add_done(received - seen);
            seen = received;
          }
        });
        if (!done) {
          return tl::unexpected(as_error(done.error()));
        }
        return {};
      });
      util::Expected<void> linked =
          outcome ? cache.link_snapshot_file(*commit, item.path, etag)
                  : util::Expected<void>(tl::unexpected(outcome.error()));
      if (!linked) {
        std::lock_guard<std::mutex> guard(errors_mutex);
        errors.push_back(fmt::format("{}: {}", item.path, linked.error().message));
        continue;
      }
      if (*outcome == BlobOutcome::downloaded) {
        ++downloaded;
        bytes += item.file->size;
      }
    }
  };
  const auto threads = std::min(std::max<std::size_t>(m_parallel_downloads, 1), pending.size());
  std::vector<std::thread> workers;
  for (std::size_t t = 1; t < threads; ++t) {
    workers.emplace_back(work);
  }
  work();
  for (auto& worker : workers) {
    worker.join();
  }
  bar.finish();
  if (!errors.empty()) {
    std::sort(errors.begin(), errors.end());
    return util::fail(fmt::format("{} of {} files of \"{}\" could not be downloaded; first: {}",
                                  errors.size(), pending.size(), repo.id.str(), errors.front()));
  }
  result.downloaded = downloaded;
  result.bytes_downloaded = bytes;
  return result;
}

util::Expected<SnapshotResult> HubCache::offline_snapshot(const hub::RepoRef& repo,
                                                          std::string_view revision,
                                                          const PatternFilter& filter,
                                                          const std::string& online_error) const {
  const auto cache = this->repo(repo);
  const auto miss = [&] {
    return online_error.empty() ? offline_miss_message(repo, revision, m_root) : online_error;
  };
  const auto commit = cache.resolve_offline(revision);
  if (!commit || !present(cache.snapshot_dir(*commit))) {
    return util::fail(miss());
  }
  SnapshotResult result;
  result.commit = *commit;
  result.path = cache.snapshot_dir(*commit);
  // With a tree listing, every wanted file must be there (Python's IncompleteSnapshotError);
  // without one the folder is taken as it is, as Python does.
  if (auto files = cached_listing(cache, *commit)) {
    std::vector<std::string> missing;
    for (const auto& [path, file] : *files) {
      if (!filter.matches(path)) {
        continue;
      }
      ++result.files;
      // An unsafe name is never stored, so it counts as missing (and is never stat'ed).
      if (!is_safe_repo_path(path) || !present(cache.snapshot_file(*commit, path))) {
        missing.push_back(path);
      }
    }
    if (!missing.empty()) {
      return util::fail(fmt::format(
          "the cached snapshot {} of \"{}\" lacks {} wanted file(s), first \"{}\"{}", *commit,
          repo.id.str(), missing.size(), missing.front(),
          online_error.empty() ? std::string(" (offline mode is on)") : ": " + online_error));
    }
  }
  return result;
}

util::Expected<fs::path> HubCache::file_download(const hub::RepoRef& repo, std::string_view revision,
                                                 std::string_view path) const {
  if (!is_safe_repo_path(path)) {
    return util::fail(fmt::format("invalid path in repository \"{}\"", path));
  }
  const auto cache = this->repo(repo);
  // A file cached under a commit never needs the network, even online.
  if (hub::is_commit_sha(revision) && present(cache.snapshot_file(revision, path))) {
    return cache.snapshot_file(revision, path);
  }
  // Nor does one the Hub said a commit does not have (huggingface_hub's .no_exist marker):
  // a warm load would otherwise ask for kernel-status.toml each time.
  if (hub::is_commit_sha(revision) && present(cache.no_exist_file(revision, path))) {
    return util::fail(fmt::format("\"{}\" at commit {}: file not found (the cache's .no_exist)",
                                  path, revision));
  }
  if (offline()) {
    return offline_file(repo, revision, path, {});
  }
  auto metadata = m_client.file_metadata(repo, revision, path);
  if (!metadata) {
    const auto& error = metadata.error();
    if (error.kind == hub::ErrorKind::entry_not_found && error.repo_commit &&
        hub::is_commit_sha(*error.repo_commit)) {
      (void)cache.write_ref(revision, *error.repo_commit);
      (void)cache.mark_no_exist(*error.repo_commit, path);
    }
    if (may_use_cache(error)) {
      return offline_file(repo, revision, path, error.message);
    }
    return tl::unexpected(as_error(error));
  }
  if (!hub::is_commit_sha(metadata->commit) || !is_safe_etag(metadata->etag)) {
    return util::fail(fmt::format("the server answered commit \"{}\" and etag \"{}\" for \"{}\"",
                                  metadata->commit, metadata->etag, path));
  }
  if (auto done = cache.write_ref(revision, metadata->commit); !done) {
    return tl::unexpected(done.error());
  }
  const auto link = cache.snapshot_file(metadata->commit, path);
  if (present(link)) {
    return link;
  }
  cache.tag_cache_root();
  const BlobRequest request{metadata->etag, metadata->size, /*verify_content=*/false};
  KH_TRY(ensure_blob(cache, request, [&](const fs::path& partial) -> util::Expected<void> {
    if (metadata->size == 0) {
      return {};
    }
    hub::DownloadTask task{repo, metadata->commit, std::string(path), partial, *metadata};
    auto done = m_client.download(task);
    if (!done) {
      return tl::unexpected(as_error(done.error()));
    }
    return {};
  }));
  if (auto done = cache.link_snapshot_file(metadata->commit, path, metadata->etag); !done) {
    return tl::unexpected(done.error());
  }
  return link;
}

util::Expected<fs::path> HubCache::offline_file(const hub::RepoRef& repo, std::string_view revision,
                                                std::string_view path,
                                                const std::string& online_error) const {
  const auto cache = this->repo(repo);
  if (const auto commit = cache.resolve_offline(revision)) {
    const auto file = cache.snapshot_file(*commit, path);
    if (present(file)) {
      return file;
    }
  }
  if (!online_error.empty()) {
    return util::fail(online_error);
  }
  return util::fail(fmt::format("\"{}\" at {}", path, offline_miss_message(repo, revision, m_root)));
}

}  // namespace kernelhub::cache
