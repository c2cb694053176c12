// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private to the loader's Hub loads (hub_kernel.cpp): where a request leads. A load's view of
// the Hub (HubSession), and the resolution of a request's version or revision to one commit
// with the reference's errors: `version=<N>` through the kernel's `v<N>` refs (warning when a
// newer one exists), the publisher's trust checked first when asked, kernel-status.toml
// redirects followed online, and offline only what the cache already holds.

#include <filesystem>
#include <string>
#include <vector>

#include <kernelhub/cache/hub_cache.hpp>
#include <kernelhub/hub/hub_client.hpp>
#include <kernelhub/loader/hub_kernel.hpp>

namespace kernelhub::loader::detail {

// One load's view of the Hub: a client that is offline when the request is local-only, the
// kernels cache, and the cache kernel-status.toml goes to.
class HubSession {
 public:
  HubSession(const HubLoadContext& context, const HubKernelRequest& request)
      : m_client(with_offline(context.endpoint, request.local_files_only),
                 context.client_options, context.transport),
        m_cache(context.cache_dir, m_client),
        m_status_cache(context.status_cache_dir.empty() ? context.cache_dir
                                                        : context.status_cache_dir,
                       m_client),
        m_stamp_root(context.cache_dir / ".kernelhub" / "verified"),
        m_seal_root(context.cache_dir / ".kernelhub" / "sealed"),
        m_seal_settle_seconds(context.seal_settle_seconds) {}

  bool offline() const { return m_cache.offline(); }
  const hub::HubClient& client() const { return m_client; }
  const cache::HubCache& cache() const { return m_cache; }
  const cache::HubCache& status_cache() const { return m_status_cache; }
  const std::filesystem::path& stamp_root() const { return m_stamp_root; }
  const std::filesystem::path& seal_root() const { return m_seal_root; }
  int seal_settle_seconds() const { return m_seal_settle_seconds; }

 private:
  static hub::Endpoint with_offline(hub::Endpoint endpoint, bool local_files_only) {
    endpoint.offline = endpoint.offline || local_files_only;
    return endpoint;
  }

  hub::HubClient m_client;
  cache::HubCache m_cache;
  cache::HubCache m_status_cache;
  std::filesystem::path m_stamp_root;
  std::filesystem::path m_seal_root;
  int m_seal_settle_seconds;
};

// Where a request leads after version resolution and redirects.
struct HubTarget {
  hub::RepoId repo;
  std::string revision;       // what names the commit (and the error texts): commit or raw
  std::string info_revision;  // RepoInfo.revision, before any redirect
  std::string commit;
  bool redirected = false;
  std::vector<std::string> warnings;
};

inline hub::RepoRef kernel_ref(const hub::RepoId& repo) {
  return hub::RepoRef{repo, hub::RepoType::kernel};
}

inline LoadError as_load_error(LoadErrorKind kind, const util::Error& error) {
  LoadError out;
  out.message = error.message;
  out.kind = kind;
  return out;
}

LoadResult<hub::RepoId> parse_repo(const std::string& text);

// Exactly one of `version` and `revision`, with the reference's errors.
LoadResult<void> check_version_choice(const HubKernelRequest& request);

// version -> commit with the reference's errors and its warning for an outdated version.
LoadResult<std::string> resolve_version(const HubSession& session, const hub::RepoId& repo,
                                        unsigned number, std::vector<std::string>& warnings);

LoadResult<HubTarget> resolve_target(const HubSession& session, const HubKernelRequest& request,
                                     bool check_trust, bool follow_redirects);

}  // namespace kernelhub::loader::detail
