// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/markdown_cache.hpp>

namespace kernelhub::server::web {

MarkdownCache::MarkdownCache(std::size_t capacity_bytes) : m_capacity(capacity_bytes) {}

std::shared_ptr<const RenderedMarkdown> MarkdownCache::find(const std::string& key) {
  std::lock_guard lock(m_mutex);
  const auto found = m_index.find(key);
  if (found == m_index.end()) {
    return nullptr;
  }
  m_entries.splice(m_entries.begin(), m_entries, found->second);
  return found->second->rendered;
}

void MarkdownCache::insert(const std::string& key,
                           std::shared_ptr<const RenderedMarkdown> rendered) {
  const std::size_t bytes =
      key.size() + rendered->html.size() + rendered->refusal.size() + sizeof(Entry);
  if (bytes > m_capacity / 8) {
    return;
  }
  std::lock_guard lock(m_mutex);
  if (const auto found = m_index.find(key); found != m_index.end()) {
    m_held -= found->second->bytes;
    m_entries.erase(found->second);
    m_index.erase(found);
  }
  m_entries.push_front(Entry{key, std::move(rendered), bytes});
  m_index.emplace(key, m_entries.begin());
  m_held += bytes;
  while (m_held > m_capacity && !m_entries.empty()) {
    m_held -= m_entries.back().bytes;
    m_index.erase(m_entries.back().key);
    m_entries.pop_back();
  }
}

std::size_t MarkdownCache::held_bytes() const {
  std::lock_guard lock(m_mutex);
  return m_held;
}

}  // namespace kernelhub::server::web
