// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>

namespace kernelhub::server {

// Failed authentications per client address, kept apart for sign-ins (`POST /login`) and
// for bearer tokens (`Authorization: Bearer`, HubRouter::screen_bearer): after `max_failures` within `window`
// of the first, the address is refused until that window has passed, without the token being
// checked, so guessing costs a minute per few tries. Refusing instead of sleeping holds no
// server thread. Thread-safe.
class LoginThrottle {
 public:
  using Clock = std::chrono::steady_clock;

  LoginThrottle(std::size_t max_failures = 5,
                std::chrono::seconds window = std::chrono::seconds(60),
                std::size_t max_addresses = 100000);

  bool allowed(const std::string& address, Clock::time_point now = Clock::now());
  void failed(const std::string& address, Clock::time_point now = Clock::now());
  void succeeded(const std::string& address);

 private:
  struct Failures {
    std::size_t count = 0;
    Clock::time_point since;
  };

  std::size_t m_max_failures;
  std::chrono::seconds m_window;
  std::size_t m_max_addresses;
  std::mutex m_mutex;
  std::map<std::string, Failures> m_failures;
};

}  // namespace kernelhub::server
