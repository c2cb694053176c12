// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <kernelhub/server/http_message.hpp>
#include <kernelhub/server/lfs_grant.hpp>
#include <kernelhub/server/login_throttle.hpp>
#include <kernelhub/server/repository_store.hpp>
#include <kernelhub/server/server_settings.hpp>
#include <kernelhub/server/session_store.hpp>
#include <kernelhub/server/upstream_mirror.hpp>
#include <kernelhub/server/variant_check_queue.hpp>
#include <kernelhub/util/expected.hpp>

namespace kernelhub::server {

namespace handlers {
struct Context;
}

// The Hub protocol over a RepositoryStore: routes a request on its raw path (hub-api.md §1.2)
// to the read and write handlers and turns every HubError into the Hub's error answer.
// Thread-safe: the HTTP transport calls it from its whole pool.
class HubRouter {
 public:
  // `checks` says whether the variants of each new kernel commit are checked on a worker
  // thread of this router's own (VariantCheckQueue) or only when the caller runs them (tests).
  explicit HubRouter(ServerSettings settings,
                     VariantCheckQueue::Run checks = VariantCheckQueue::Run::on_thread);

  HttpResponse handle(const HttpRequest& request);

  // What the transport does with a request's body, decided from the request line and headers
  // alone (`head.body` is empty): either the answer to send without reading a byte of the
  // body (a write without a valid token, on a read-only server, ...), or the most bytes of
  // body to read. Commits may be as large as settings.max_body_bytes and are spooled to a
  // file; other bodies are small JSON and stay in memory.
  struct BodyPlan {
    enum class Storage { memory, file };
    Storage storage = Storage::memory;
    std::uint64_t limit = 0;
  };
  HubExpected<BodyPlan> admit(const HttpRequest& head);

  // The settings in force; a request keeps the snapshot it started with.
  std::shared_ptr<const ServerSettings> settings() const;
  RepositoryStore& store() { return m_store; }
  VariantCheckQueue& variant_checks() { return m_variant_checks; }

  // Reads config.toml (and the token file, when there is one) again: with `if_changed` only
  // when either file's stamp (mtime, size, inode, existence) moved since the last read; with
  // `always` regardless (SIGHUP). Each file is read on its own: a missing, empty or
  // comment-only token file means no token (nobody may write); a file that exists and fails
  // to read or parse leaves its part of the settings in force, and the error says which and
  // why. True when the settings were replaced.
  enum class Reload { if_changed, always };
  util::Expected<bool> reload(Reload when);

  // `handle` checks the files' stamps at most once per `interval` (the reload's errors go to
  // `log`): editing config.toml takes effect on the next request after that, with no signal.
  void watch_settings(std::chrono::milliseconds interval,
                      std::function<void(const std::string&)> log);

 private:
  void reload_if_due();
  // Counts a wrong bearer token against the client's address; 429 for a write from an address
  // past the limit (5 in a minute, as sign-ins: guessing a token costs a minute per five).
  HubExpected<void> screen_bearer(const HttpRequest& head, const ServerSettings& settings);
  HubExpected<HttpResponse> sign_in(handlers::Context& ctx);

  mutable std::mutex m_settings_mutex;
  std::shared_ptr<const ServerSettings> m_settings;
  FileStamp m_config_stamp;
  FileStamp m_token_stamp;
  std::chrono::milliseconds m_watch_interval{0};
  std::function<void(const std::string&)> m_log;
  std::atomic<std::int64_t> m_next_check{0};  // steady_clock ticks
  RepositoryStore m_store;
  LoginThrottle m_bearer_throttle;  // wrong `Authorization: Bearer` tokens per address
  SessionStore m_sessions;
  LoginThrottle m_login_throttle;
  UrlSigner m_signer;  // the LFS URLs' key: new each start, so a restart voids them
  UpstreamMirror m_mirror;  // idle unless settings.mirror names an upstream
  // After m_store, which its worker reads: destroyed (its worker stopped) first.
  VariantCheckQueue m_variant_checks;
};

}  // namespace kernelhub::server
