// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/hub_target.hpp>

#include <algorithm>
#include <future>
#include <system_error>

#include <fmt/format.h>

#include <kernelhub/cache/kernel_download.hpp>
#include <kernelhub/loader/kernel_status.hpp>
#include <kernelhub/loader/publisher_trust.hpp>

namespace kernelhub::loader::detail {

namespace fs = std::filesystem;

namespace {

std::string no_local_snapshot(const hub::RepoId& repo, std::string_view revision) {
  return fmt::format(
      "Cannot find a local snapshot for {} (revision: {}). When Hugging Face Hub is in offline "
      "mode the kernel must already be present in the local cache.",
      repo.str(), revision);
}

}  // namespace

LoadResult<hub::RepoId> parse_repo(const std::string& text) {
  auto repo = hub::RepoId::parse(text);
  if (!repo) {
    return load_fail(LoadErrorKind::value, repo.error().message);
  }
  return *repo;
}

LoadResult<void> check_version_choice(const HubKernelRequest& request) {
  if (request.version && request.revision) {
    return load_fail(LoadErrorKind::value, "Only one of `revision` or `version` must be specified.");
  }
  if (!request.version && !request.revision) {
    return load_fail(LoadErrorKind::value,
                     "A kernel version or revision must be specified. Use `version=<major>` for a "
                     "stable kernel API version or `revision=<branch/tag/commit>` for an explicit "
                     "Hub revision. See: https://huggingface.co/docs/kernels/migration");
  }
  return {};
}

LoadResult<std::string> resolve_version(const HubSession& session, const hub::RepoId& repo,
                                        unsigned number, std::vector<std::string>& warnings) {
  auto versions = cache::kernel_versions(session.cache(), repo);
  if (!versions) {
    return tl::unexpected(as_load_error(LoadErrorKind::io, versions.error()));
  }
  const auto found = std::find_if(versions->begin(), versions->end(),
                                  [&](const cache::KernelVersion& v) { return v.number == number; });
  if (found == versions->end()) {
    // The same texts as cache::resolve_kernel_version, which we do not call so that the
    // version list is fetched only once.
    auto missing = cache::resolve_kernel_version(session.cache(), repo, number);
    return load_fail(LoadErrorKind::value,
                     missing ? fmt::format("Version {} not found", number) : missing.error().message);
  }
  if (versions->back().number > number) {
    warnings.push_back(fmt::format("You are using version {} of '{}', but version {} is available.",
                                   number, repo.str(), versions->back().number));
  }
  return found->commit;
}

namespace {

// The commit `request` names, after version resolution and (with follow_redirects) the
// kernel's redirect: everything of resolve_target but the trust check.
LoadResult<void> resolve_commit(const HubSession& session, const HubKernelRequest& request,
                                bool follow_redirects, HubTarget& target) {
  if (request.version) {
    auto commit = resolve_version(session, target.repo, *request.version, target.warnings);
    if (!commit) {
      return tl::unexpected(commit.error());
    }
    target.revision = *commit;
  } else {
    target.revision = *request.revision;
  }
  target.info_revision = target.revision;

  if (follow_redirects && !session.offline()) {
    auto status = fetch_kernel_status(session.status_cache(), target.repo, target.revision);
    if (!status) {
      return tl::unexpected(status.error());
    }
    if (*status) {
      target.warnings.push_back(redirect_warning(target.repo.str(), (*status)->destination));
      target.repo = KH_LOAD_TRY(parse_repo((*status)->destination));
      target.revision = (*status)->revision;
      target.redirected = true;
    }
  }

  const auto ref = kernel_ref(target.repo);
  if (session.offline()) {
    const auto folder = session.cache().repo(ref);
    const auto commit = folder.resolve_offline(target.revision);
    std::error_code ec;
    if (!commit || !fs::is_directory(folder.snapshot_dir(*commit), ec)) {
      return load_fail(LoadErrorKind::not_found, no_local_snapshot(target.repo, target.revision));
    }
    target.commit = *commit;
  } else {
    auto commit = session.cache().resolve_revision(ref, target.revision);
    if (!commit) {
      return tl::unexpected(as_load_error(LoadErrorKind::io, commit.error()));
    }
    target.commit = *commit;
  }
  return {};
}

// The publisher's trust, asked of the Hub on a thread of its own when one can be started.
std::future<LoadResult<void>> ask_publisher_trust(const HubSession& session,
                                                  const std::string& repo_id) {
  const auto ask = [&session, &repo_id] { return check_publisher_trust(session.client(), repo_id); };
  try {
    return std::async(std::launch::async, ask);
  } catch (const std::system_error&) {
    return std::async(std::launch::deferred, ask);  // no thread to be had: asked when awaited
  }
}

}  // namespace

LoadResult<HubTarget> resolve_target(const HubSession& session, const HubKernelRequest& request,
                                     bool check_trust, bool follow_redirects) {
  if (auto choice = check_version_choice(request); !choice) {
    return tl::unexpected(choice.error());
  }
  HubTarget target{KH_LOAD_TRY(parse_repo(request.repo_id)), {}, {}, {}, false, {}};
  // The trust check's request and the version's (and the redirect's) do not depend on each
  // other, so they go out side by side: a warm online load waits one round trip, not two (two
  // sequential ones were most of its cost against a distant Hub). The verdict is still the
  // first error a refused load reports, and nothing of the kernel is downloaded before it:
  // only its refs, which are no code, may be cached for an untrusted publisher.
  std::future<LoadResult<void>> trust;
  if (check_trust) {
    if (session.offline()) {
      target.warnings.push_back(offline_trust_warning(request.repo_id));
    } else {
      trust = ask_publisher_trust(session, request.repo_id);
    }
  }
  auto resolved = resolve_commit(session, request, follow_redirects, target);
  if (trust.valid()) {
    if (auto trusted = trust.get(); !trusted) {
      return tl::unexpected(trusted.error());
    }
  }
  if (!resolved) {
    return tl::unexpected(resolved.error());
  }
  return target;
}

}  // namespace kernelhub::loader::detail
