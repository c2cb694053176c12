// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <kernelhub/server/hub_error.hpp>
#include <kernelhub/server/repo_id.hpp>

struct git_repository;

namespace kernelhub::server {

// A repository opened for one request. The handle goes back to its pool when the last copy
// is dropped (a streamed download keeps it until the last byte is sent).
struct OpenRepository {
  std::shared_ptr<git_repository> git;
  bool is_private = false;
};

// The repositories under the server's root, each a bare git repository at
// `<root>/<models|datasets|kernels>/<namespace>/<name>.git`. libgit2 handles are not safe to
// share between threads, so each repository keeps a small pool of opened handles that
// requests borrow; opening costs file reads, borrowing only a lock.
class RepositoryStore {
 public:
  explicit RepositoryStore(std::filesystem::path root);
  ~RepositoryStore();
  RepositoryStore(const RepositoryStore&) = delete;
  RepositoryStore& operator=(const RepositoryStore&) = delete;

  const std::filesystem::path& root() const { return m_root; }
  std::filesystem::path directory(const RepoId& id) const;

  // RepoNotFound (404) when no such repository exists.
  HubExpected<OpenRepository> open(const RepoId& id);

  // Creates the bare repository with a first commit on `main` (a `.gitattributes`, as the Hub
  // does), built in a temporary folder and renamed into place so a crash leaves either
  // nothing or a whole repository. Returns false when it already exists.
  HubExpected<bool> create(const RepoId& id, bool is_private);

  // Drops the repository's pool of handles, so the next open reads its config (the private
  // flag) again; handles in use stay valid. For a mirror whose upstream changed the flag.
  void forget(const RepoId& id);

  // Serialises the writes to one repository within this process; the ref update's
  // compare-and-swap guards against anything else.
  std::mutex& write_mutex(const RepoId& id);

  // Every repository of a type, sorted by id.
  std::vector<RepoId> list(RepoType type) const;

  // Removes what a killed server leaves behind: libgit2's `objects/tmp_object_git2_*` (an
  // object being written, up to the size of the largest file) and half-made repositories
  // (`.tmp-*` folders from `create`). Only safe before serving: this process must be the only
  // writer under the root.
  struct Leftovers {
    std::size_t count = 0;
    std::uintmax_t bytes = 0;
  };
  Leftovers remove_leftovers() const;

 private:
  struct Pool;
  std::shared_ptr<Pool> pool_for(const RepoId& id);

  std::filesystem::path m_root;
  std::mutex m_mutex;
  std::map<std::string, std::shared_ptr<Pool>> m_pools;  // by pool_key
  std::map<std::string, std::unique_ptr<std::mutex>> m_write_mutexes;
};

}  // namespace kernelhub::server
