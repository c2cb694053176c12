// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/session_store.hpp>

#include <array>
#include <cstdint>
#include <random>

namespace kernelhub::server {

// 256 bits from the kernel's generator (std::random_device reads getrandom on Linux): an id
// nobody can guess, and one that says nothing about the token.
std::string random_id() {
  static thread_local std::random_device device;
  constexpr std::string_view k_hex = "0123456789abcdef";
  std::string id;
  for (int word = 0; word < 8; ++word) {
    const std::uint32_t bits = device();
    for (int shift = 28; shift >= 0; shift -= 4) {
      id += k_hex[(bits >> shift) & 0xfu];
    }
  }
  return id;
}

SessionStore::SessionStore(std::chrono::seconds lifetime, std::size_t max_sessions)
    : m_lifetime(lifetime), m_max_sessions(max_sessions) {}

void SessionStore::drop_expired(Clock::time_point now) {
  std::erase_if(m_sessions, [now](const auto& entry) { return entry.second.expires <= now; });
}

std::string SessionStore::open(const std::string& token, Clock::time_point now) {
  std::string id = random_id();
  std::lock_guard lock(m_mutex);
  drop_expired(now);
  // Sign-ins need a valid token, so only token holders can fill the table; still, it stays
  // bounded: the session closest to expiry makes room.
  if (m_sessions.size() >= m_max_sessions && !m_sessions.empty()) {
    auto oldest = m_sessions.begin();
    for (auto it = m_sessions.begin(); it != m_sessions.end(); ++it) {
      if (it->second.expires < oldest->second.expires) {
        oldest = it;
      }
    }
    m_sessions.erase(oldest);
  }
  m_sessions[id] = Session{token, now + m_lifetime};
  return id;
}

std::optional<std::string> SessionStore::token_of(const std::string& id, Clock::time_point now) {
  std::lock_guard lock(m_mutex);
  const auto found = m_sessions.find(id);
  if (found == m_sessions.end()) {
    return std::nullopt;
  }
  if (found->second.expires <= now) {
    m_sessions.erase(found);
    return std::nullopt;
  }
  return found->second.token;
}

void SessionStore::close(const std::string& id) {
  std::lock_guard lock(m_mutex);
  m_sessions.erase(id);
}

std::size_t SessionStore::size() const {
  std::lock_guard lock(m_mutex);
  return m_sessions.size();
}

}  // namespace kernelhub::server
