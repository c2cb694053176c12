// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/variant_check_queue.hpp>

#include <kernelhub/server/repository_reader.hpp>
#include <kernelhub/server/repository_store.hpp>

namespace kernelhub::server {

HubExpected<std::size_t> record_variant_checks(const std::shared_ptr<git_repository>& repo,
                                               const std::string& commit,
                                               std::span<const PublishedKey> keys,
                                               VariantCheckRecord::Origin origin,
                                               std::stop_token stop) {
  auto folders = list_tree(repo.get(), commit, "build", Recursive::no, Sizes::skip);
  if (!folders) {
    if (folders.error().status == 404) {
      return 0;  // not a kernel with variants, or not yet
    }
    return tl::unexpected(folders.error());
  }
  const VariantCheckStore store(repository_folder(repo.get()));
  const std::vector<std::string> hints = key_hints(keys);
  std::vector<verify::TrustedKey> trusted;
  bool parsed = false;
  std::size_t checked = 0;
  for (const TreeItem& folder : *folders) {
    if (!folder.is_directory) {
      continue;
    }
    if (const auto record = store.find(folder.oid); record && record->keys == hints) {
      continue;
    }
    if (!parsed) {
      trusted = parse_published_keys(keys);
      parsed = true;
    }
    auto integrity = check_variant_integrity(repo, commit, folder.path, trusted, stop);
    if (!integrity) {
      break;  // stopped
    }
    const VariantCheckRecord record{folder.oid, commit, origin, hints, std::move(*integrity)};
    if (auto saved = store.save(record); !saved) {
      return hub_fail(500, "", saved.error().message);
    }
    ++checked;
  }
  return checked;
}

VariantCheckQueue::VariantCheckQueue(RepositoryStore& store, Run run) : m_store(store) {
  if (run == Run::on_thread) {
    m_worker = std::jthread([this](std::stop_token stop) { work(stop); });
  }
}

VariantCheckQueue::~VariantCheckQueue() {
  if (m_worker.joinable()) {
    m_worker.request_stop();
    m_worker.join();
  }
}

VariantCheckQueue::JobKey VariantCheckQueue::key_of(const RepoId& id,
                                                    const std::string& commit) const {
  return {m_store.directory(id).string(), commit};
}

void VariantCheckQueue::enqueue(const RepoId& id, const std::string& commit,
                                std::vector<PublishedKey> keys) {
  {
    const std::lock_guard lock(m_mutex);
    if (m_jobs.size() >= k_max_jobs || !m_pending.insert(key_of(id, commit)).second) {
      return;
    }
    m_jobs.push_back(Job{id, commit, std::move(keys)});
  }
  m_wake.notify_one();
}

bool VariantCheckQueue::pending(const RepoId& id, const std::string& commit) const {
  const std::lock_guard lock(m_mutex);
  return m_pending.contains(key_of(id, commit));
}

bool VariantCheckQueue::run_next() {
  Job job;
  {
    const std::lock_guard lock(m_mutex);
    if (m_jobs.empty()) {
      return false;
    }
    job = std::move(m_jobs.front());
    m_jobs.pop_front();
  }
  run(job, {});
  return true;
}

void VariantCheckQueue::run(const Job& job, std::stop_token stop) {
  // A repository deleted or unreadable meanwhile, or a record that cannot be written: nothing
  // is recorded, and a page checks the variants when it shows them.
  if (auto repo = m_store.open(job.id)) {
    (void)record_variant_checks(repo->git, job.commit, job.keys,
                                VariantCheckRecord::Origin::upload, stop);
  }
  const std::lock_guard lock(m_mutex);
  m_pending.erase(key_of(job.id, job.commit));
}

void VariantCheckQueue::work(std::stop_token stop) {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(m_mutex);
      if (!m_wake.wait(lock, stop, [this] { return !m_jobs.empty(); })) {
        return;  // stop requested
      }
      if (stop.stop_requested()) {
        return;
      }
      job = std::move(m_jobs.front());
      m_jobs.pop_front();
    }
    run(job, stop);
  }
}

}  // namespace kernelhub::server
