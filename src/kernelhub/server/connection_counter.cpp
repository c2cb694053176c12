// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/connection_counter.hpp>

namespace kernelhub::server {

bool ConnectionCounter::try_add(const std::string& peer) {
  std::lock_guard lock(m_mutex);
  std::size_t& count = m_per_peer[peer];
  if (m_total >= m_max_total || count >= m_max_per_peer) {
    if (count == 0) {
      m_per_peer.erase(peer);
    }
    return false;
  }
  ++count;
  ++m_total;
  return true;
}

void ConnectionCounter::remove(const std::string& peer) {
  std::lock_guard lock(m_mutex);
  const auto it = m_per_peer.find(peer);
  if (it != m_per_peer.end() && --it->second == 0) {
    m_per_peer.erase(it);
  }
  --m_total;
}

}  // namespace kernelhub::server
