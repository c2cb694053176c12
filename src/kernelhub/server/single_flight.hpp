// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace kernelhub::server {

// Runs one piece of work per key at a time and hands its result to every caller that asked for
// the same key while it ran (Go's singleflight): fifty clients asking a mirror for the same new
// repository at once make one upstream fetch. A caller that comes after the work ended starts
// it again, so the work itself must first check whether it is still needed.
template <typename Result>
class SingleFlight {
 public:
  Result run(const std::string& key, const std::function<Result()>& work) {
    std::shared_ptr<Flight> flight;
    bool leader = false;
    {
      std::lock_guard lock(m_mutex);
      auto& slot = m_flights[key];
      if (!slot) {
        slot = std::make_shared<Flight>();
        leader = true;
      } else {
        ++slot->waiters;
      }
      flight = slot;
    }
    if (!leader) {
      std::unique_lock lock(flight->mutex);
      flight->done.wait(lock, [&] { return flight->result.has_value() || flight->abandoned; });
      if (flight->result) {
        return *flight->result;
      }
      lock.unlock();
      return run(key, work);  // the leader threw: try again, one of the waiters leading
    }
    std::optional<Result> result;
    try {
      result = work();
    } catch (...) {
      finish(key, *flight, std::nullopt);
      throw;
    }
    finish(key, *flight, result);
    return *result;
  }

  // How many callers wait for the flight of `key` now (not counting its leader).
  std::size_t waiters(const std::string& key) {
    std::lock_guard lock(m_mutex);
    const auto it = m_flights.find(key);
    return it == m_flights.end() ? 0 : it->second->waiters;
  }

 private:
  struct Flight {
    std::mutex mutex;
    std::condition_variable done;
    std::optional<Result> result;
    bool abandoned = false;
    std::size_t waiters = 0;  // guarded by SingleFlight::m_mutex
  };

  void finish(const std::string& key, Flight& flight, const std::optional<Result>& result) {
    {
      std::lock_guard lock(m_mutex);
      m_flights.erase(key);
    }
    {
      std::lock_guard lock(flight.mutex);
      flight.result = result;
      flight.abandoned = !result;
    }
    flight.done.notify_all();
  }

  std::mutex m_mutex;
  std::map<std::string, std::shared_ptr<Flight>> m_flights;
};

}  // namespace kernelhub::server
