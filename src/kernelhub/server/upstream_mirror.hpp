// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include <kernelhub/server/hub_error.hpp>
#include <kernelhub/server/http_message.hpp>
#include <kernelhub/server/mirror_settings.hpp>
#include <kernelhub/server/repo_id.hpp>
#include <kernelhub/server/repository_store.hpp>
#include <kernelhub/server/single_flight.hpp>

namespace kernelhub::hub {
class Transport;
}

namespace kernelhub::server {

namespace handlers {
struct Context;
}

// The header every answer about a mirrored repository carries when the upstream could not be
// asked: `X-Kernelhub-Mirror: stale; upstream error: <why>` (docs/mirror.md).
inline constexpr std::string_view k_mirror_header = "X-Kernelhub-Mirror";

// What a request names, as far as the mirror cares (hub-api.md §1.2's URL shapes): the
// repository, the revision when the URL has one, and whether the request would write.
struct MirrorTarget {
  RepoId id;
  std::optional<std::string> revision;
  bool writes = false;
  // The LFS batch API: a miss fetches the repository, but it is not a reason to refresh.
  bool lfs = false;
};
std::optional<MirrorTarget> mirror_target(const HttpRequest& request,
                                          std::span<const std::string> segments);

// `kernelhub serve --mirror` (docs/mirror.md): a pull-through mirror of another hub. A request
// for a repository this hub lacks, or for a revision it cannot resolve, fetches the repository
// from the upstream over git (repository_fetch.hpp, the upstream's commit ids kept) before it
// is answered; branches and tags are checked again at most every `refresh` seconds. LFS
// objects are fetched lazily, one object when a client first asks for it (fetch_lfs): a kernel
// repository holds a build of every variant and version, and a client wants one.
//
// One fetch per repository (and per LFS object) runs at a time in this process; requests that
// come meanwhile wait for its result (SingleFlight). A fetch becomes visible whole: a new
// repository is made in a `.tmp-` folder and renamed into place, an existing one gets its
// objects first and its refs in one transaction, an LFS object is checked against its sha256
// before it is linked in. Thread-safe.
class UpstreamMirror {
 public:
  UpstreamMirror(RepositoryStore& store, std::shared_ptr<hub::Transport> transport);
  ~UpstreamMirror();

  // Called by the router before a request is routed: fetches or refreshes the repository the
  // request names when it must. Returns the value of k_mirror_header to add to the answer
  // (empty when the upstream answered), or the error to answer instead: 403 for a write to a
  // mirrored repository, 404 when neither hub has the repository, 503 when the upstream
  // cannot be reached and this hub never had it.
  HubExpected<std::string> prepare(handlers::Context& ctx);

  // Fetches LFS object `oid` of `size` bytes of the mirrored repository `id` from the upstream
  // into its LFS store, unless it is stored already. Called by the LFS handlers on a miss.
  HubExpected<void> fetch_lfs(const MirrorSettings& settings, const RepoId& id,
                              const std::string& oid, std::uint64_t size);

  // Where each upstream fetch is reported (`serve`'s stderr); set before serving.
  void set_log(std::function<void(const std::string&)> log) { m_log = std::move(log); }

 private:
  struct RepoState {
    std::chrono::steady_clock::time_point started{};  // when the last fetch began
    std::chrono::steady_clock::time_point checked{};  // and ended
    std::string error;  // the last refresh's upstream error, empty when it succeeded
    bool known = false;
    std::optional<std::string> upstream;  // nullopt: a local repository, never refreshed
  };
  // The outcome of one sync, shared with the requests that waited for it.
  struct Synced {
    bool ok = false;
    int status = 0;  // when !ok: 404 (the upstream has no such repository) or 503
    std::string error;
  };

  using Clock = std::chrono::steady_clock;
  // Why a request wants a fetch; checked again once its flight starts, since a flight that
  // ended just before may have done what this one would.
  struct Need {
    enum class Kind { repository, revision, refresh };
    Kind kind = Kind::repository;
    std::string revision;
    bool client_has_token = false;
  };
  // Fetches (or first makes) repository `id` from the upstream.
  Synced sync(const MirrorSettings& settings, const RepoId& id, const Need& need);
  Synced sync_once(const MirrorSettings& settings, const RepoId& id, const Need& need);
  RepoState state_of(const RepoId& id);
  void record(const RepoId& id, const RepoState& state);

  void log(const std::string& message) const;

  RepositoryStore& m_store;
  std::function<void(const std::string&)> m_log;
  std::shared_ptr<hub::Transport> m_transport;
  std::mutex m_mutex;
  std::map<std::string, RepoState> m_states;
  SingleFlight<Synced> m_repo_flights;
  SingleFlight<HubExpected<void>> m_lfs_flights;
};

}  // namespace kernelhub::server
