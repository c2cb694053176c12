// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>

namespace kernelhub::server {

// Counts a server's open connections in all and per IP address (ServerLimits'
// max_connections and max_connections_per_peer), so one peer cannot take every slot. The
// acceptor adds one before a connection gets a session; the session removes it when dropped.
class ConnectionCounter {
 public:
  ConnectionCounter(std::size_t max_total, std::size_t max_per_peer)
      : m_max_total(max_total), m_max_per_peer(max_per_peer) {}

  // False, counting nothing, when either limit is reached.
  bool try_add(const std::string& peer);
  void remove(const std::string& peer);

 private:
  std::mutex m_mutex;
  std::size_t m_max_total;
  std::size_t m_max_per_peer;
  std::size_t m_total = 0;
  std::map<std::string, std::size_t> m_per_peer;
};

}  // namespace kernelhub::server
