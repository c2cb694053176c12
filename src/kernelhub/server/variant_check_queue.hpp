// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <kernelhub/server/hub_error.hpp>
#include <kernelhub/server/repo_id.hpp>
#include <kernelhub/server/server_settings.hpp>
#include <kernelhub/server/variant_check_store.hpp>

struct git_repository;

namespace kernelhub::server {

class RepositoryStore;

// Checks every variant folder under build/ at `commit` that has no record yet (or one made
// with other keys), and records each (variant_check_store). Returns how many it checked; the
// others were recorded already. Stops (within a file) when `stop` is requested, recording
// nothing for the variant it was on.
HubExpected<std::size_t> record_variant_checks(const std::shared_ptr<git_repository>& repo,
                                               const std::string& commit,
                                               std::span<const PublishedKey> keys,
                                               VariantCheckRecord::Origin origin,
                                               std::stop_token stop = {});

// The checks of uploaded variants, run after the commit is answered (issue 20 item 9): a
// commit handler only queues its commit, and one worker thread hashes the new variants' files
// (up to gigabytes through LFS), so neither the commit's answer nor the event loop that sent it
// waits for the hashing. Until a commit's job is done its kernel page says "verifying".
// Queued jobs are dropped when the server stops (the job in progress stops within its file);
// their variants are then checked when a page first shows them.
class VariantCheckQueue {
 public:
  enum class Run { on_thread, by_caller };

  // `Run::by_caller` starts no thread: run_next() runs the jobs (tests).
  explicit VariantCheckQueue(RepositoryStore& store, Run run = Run::on_thread);
  ~VariantCheckQueue();
  VariantCheckQueue(const VariantCheckQueue&) = delete;
  VariantCheckQueue& operator=(const VariantCheckQueue&) = delete;

  // Queues the check of `commit`'s variants against `keys` (the hub's keys when it was
  // committed). A commit already queued is not queued twice; past k_max_jobs nothing more is
  // queued (those variants are checked on a page view instead).
  void enqueue(const RepoId& id, const std::string& commit, std::vector<PublishedKey> keys);

  // Whether `commit` of `id` is queued or being checked.
  bool pending(const RepoId& id, const std::string& commit) const;

  // Runs the oldest job on the calling thread; false when there was none.
  bool run_next();

  static constexpr std::size_t k_max_jobs = 4096;

 private:
  struct Job {
    RepoId id;
    std::string commit;
    std::vector<PublishedKey> keys;
  };
  using JobKey = std::pair<std::string, std::string>;  // repository folder, commit
  JobKey key_of(const RepoId& id, const std::string& commit) const;
  void run(const Job& job, std::stop_token stop);
  void work(std::stop_token stop);

  RepositoryStore& m_store;
  mutable std::mutex m_mutex;
  std::condition_variable_any m_wake;
  std::deque<Job> m_jobs;
  std::set<JobKey> m_pending;  // queued and running
  std::jthread m_worker;       // last: stopped and joined first
};

}  // namespace kernelhub::server
