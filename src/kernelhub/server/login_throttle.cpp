// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/login_throttle.hpp>

namespace kernelhub::server {

LoginThrottle::LoginThrottle(std::size_t max_failures, std::chrono::seconds window,
                             std::size_t max_addresses)
    : m_max_failures(max_failures), m_window(window), m_max_addresses(max_addresses) {}

bool LoginThrottle::allowed(const std::string& address, Clock::time_point now) {
  std::lock_guard lock(m_mutex);
  const auto found = m_failures.find(address);
  if (found == m_failures.end()) {
    return true;
  }
  if (now - found->second.since >= m_window) {
    m_failures.erase(found);
    return true;
  }
  return found->second.count < m_max_failures;
}

void LoginThrottle::failed(const std::string& address, Clock::time_point now) {
  std::lock_guard lock(m_mutex);
  if (m_failures.size() >= m_max_addresses) {
    // Many addresses failing at once: forget those whose window is over, so the table stays
    // bounded by the addresses of the last minute.
    std::erase_if(m_failures,
                  [&](const auto& entry) { return now - entry.second.since >= m_window; });
  }
  auto [entry, fresh] = m_failures.try_emplace(address, Failures{0, now});
  if (!fresh && now - entry->second.since >= m_window) {
    entry->second = Failures{0, now};
  }
  ++entry->second.count;
}

void LoginThrottle::succeeded(const std::string& address) {
  std::lock_guard lock(m_mutex);
  m_failures.erase(address);
}

}  // namespace kernelhub::server
