// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include <kernelhub/server/web/markdown.hpp>

namespace kernelhub::server::web {

// Renderings kept by key (a hash of the text and its link bases), the least recently used
// dropped first once they hold more than `capacity_bytes` of HTML and reasons; one larger
// than an eighth of the capacity is not kept. Refusals are kept too, so a hostile text costs
// its budget once, not once per request. Thread-safe.
class MarkdownCache {
 public:
  explicit MarkdownCache(std::size_t capacity_bytes);

  std::shared_ptr<const RenderedMarkdown> find(const std::string& key);
  void insert(const std::string& key, std::shared_ptr<const RenderedMarkdown> rendered);
  std::size_t held_bytes() const;

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const RenderedMarkdown> rendered;
    std::size_t bytes;
  };

  std::size_t m_capacity;
  std::size_t m_held = 0;
  mutable std::mutex m_mutex;
  std::list<Entry> m_entries;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> m_index;
};

}  // namespace kernelhub::server::web
