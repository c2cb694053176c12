// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace kernelhub::server {

// 64 hex digits of 256 bits from the kernel's generator: ids nobody can guess (sessions, the
// sign-in form's token).
std::string random_id();

// Browser sign-ins (`/login`): an opaque random id, sent as a cookie, mapped here to the
// token it was opened with. The token never leaves the server, and the sessions live in
// memory only, so a restart signs everyone out. Thread-safe.
class SessionStore {
 public:
  using Clock = std::chrono::steady_clock;

  explicit SessionStore(std::chrono::seconds lifetime, std::size_t max_sessions = 10000);

  // A new session for `token`, valid until `now + lifetime`; its id (64 hex digits).
  std::string open(const std::string& token, Clock::time_point now = Clock::now());
  // The token of a live session, or nullopt for an unknown or expired id (which is dropped).
  std::optional<std::string> token_of(const std::string& id, Clock::time_point now = Clock::now());
  void close(const std::string& id);
  std::size_t size() const;

 private:
  struct Session {
    std::string token;
    Clock::time_point expires;
  };
  void drop_expired(Clock::time_point now);

  std::chrono::seconds m_lifetime;
  std::size_t m_max_sessions;
  mutable std::mutex m_mutex;
  std::map<std::string, Session> m_sessions;
};

}  // namespace kernelhub::server
