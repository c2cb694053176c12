// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/hub_kernel.hpp>

#include <algorithm>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <kernelhub/cache/cache_location.hpp>
#include <kernelhub/cache/hub_cache.hpp>
#include <kernelhub/cache/kernel_download.hpp>
#include <kernelhub/cache/pattern_filter.hpp>
#include <kernelhub/hub/hub_client.hpp>
#include <kernelhub/loader/blob_verify.hpp>
#include <kernelhub/loader/digest_check.hpp>
#include <kernelhub/loader/kernel_status.hpp>
#include <kernelhub/loader/publisher_trust.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>

namespace kernelhub::loader {

namespace fs = std::filesystem;

namespace {

// One load's view of the Hub: a client that is offline when the request is local-only, the
// kernels cache, and the cache kernel-status.toml goes to.
class Session {
 public:
  Session(const HubLoadContext& context, const HubKernelRequest& request)
      : m_client(with_offline(context.endpoint, request.local_files_only),
                 context.client_options, context.transport),
        m_cache(context.cache_dir, m_client),
        m_status_cache(context.status_cache_dir.empty() ? context.cache_dir
                                                        : context.status_cache_dir,
                       m_client),
        m_stamp_root(context.cache_dir / ".kernelhub" / "verified") {}

  bool offline() const { return m_cache.offline(); }
  const hub::HubClient& client() const { return m_client; }
  const cache::HubCache& cache() const { return m_cache; }
  const cache::HubCache& status_cache() const { return m_status_cache; }
  const fs::path& stamp_root() const { return m_stamp_root; }

 private:
  static hub::Endpoint with_offline(hub::Endpoint endpoint, bool local_files_only) {
    endpoint.offline = endpoint.offline || local_files_only;
    return endpoint;
  }

  hub::HubClient m_client;
  cache::HubCache m_cache;
  cache::HubCache m_status_cache;
  fs::path m_stamp_root;
};

// Where a request leads after version resolution and redirects.
struct Target {
  hub::RepoId repo;
  std::string revision;       // what names the commit (and the error texts): commit or raw
  std::string info_revision;  // RepoInfo.revision, before any redirect
  std::string commit;
  bool redirected = false;
  std::vector<std::string> warnings;
};

hub::RepoRef kernel_ref(const hub::RepoId& repo) {
  return hub::RepoRef{repo, hub::RepoType::kernel};
}

LoadError as_load_error(LoadErrorKind kind, const util::Error& error) {
  LoadError out;
  out.message = error.message;
  out.kind = kind;
  return out;
}

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

// version -> commit with the reference's errors and its warning for an outdated version.
LoadResult<std::string> resolve_version(const Session& session, const hub::RepoId& repo,
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

std::string no_local_snapshot(const hub::RepoId& repo, std::string_view revision) {
  return fmt::format(
      "Cannot find a local snapshot for {} (revision: {}). When Hugging Face Hub is in offline "
      "mode the kernel must already be present in the local cache.",
      repo.str(), revision);
}

LoadResult<Target> resolve_target(const Session& session, const HubKernelRequest& request,
                                  bool check_trust, bool follow_redirects) {
  if (auto choice = check_version_choice(request); !choice) {
    return tl::unexpected(choice.error());
  }
  Target target{KH_LOAD_TRY(parse_repo(request.repo_id)), {}, {}, {}, false, {}};
  if (check_trust) {
    if (session.offline()) {
      target.warnings.push_back(offline_trust_warning(request.repo_id));
    } else if (auto trusted = check_publisher_trust(session.client(), request.repo_id); !trusted) {
      return tl::unexpected(trusted.error());
    }
  }
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
  return target;
}

// The folder as the repository spells it ("torch2010" and "torch210" parse alike).
std::optional<std::string> folder_of(const variants::Variant& variant,
                                     const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (auto parsed = variants::parse_variant(name); parsed && *parsed == variant) {
      return name;
    }
  }
  return std::nullopt;
}

struct Choice {
  std::vector<std::string> names;
  variants::Resolution resolution;
  std::optional<std::string> folder;  // the chosen variant's folder, when one fits
};

LoadResult<variants::SystemInfo> system_for(const HubLoadContext& context,
                                            const HubKernelRequest& request) {
  variants::SystemInfo system = context.system;
  std::optional<std::string_view> requested;
  if (request.backend) {
    requested = *request.backend;
  }
  if (auto applied = variants::apply_backend(system, requested); !applied) {
    return tl::unexpected(as_load_error(LoadErrorKind::value, applied.error()));
  }
  return system;
}

// The variant's metadata.json: from the snapshot when cached (always, offline), else
// downloaded on its own as the reference does before the variant.
std::optional<metadata::Metadata> variant_metadata(const Session& session, const Target& target,
                                                   const std::string& folder) {
  const auto file = "build/" + folder + "/metadata.json";
  const auto ref = kernel_ref(target.repo);
  auto path = session.cache().file_download(ref, target.commit, file);
  if (!path) {
    return std::nullopt;
  }
  auto parsed = metadata::read_metadata_file(*path);
  return parsed ? std::optional<metadata::Metadata>(std::move(*parsed)) : std::nullopt;
}

LoadResult<Choice> choose_variant(const Session& session, const Target& target,
                                  const variants::SystemInfo& system, const DeviceArch& device,
                                  bool check_arch) {
  Choice choice;
  auto names = cache::kernel_variants(session.cache(), target.repo, target.commit);
  if (!names) {
    return tl::unexpected(as_load_error(
        session.offline() ? LoadErrorKind::not_found : LoadErrorKind::io, names.error()));
  }
  choice.names = std::move(*names);
  choice.resolution = variants::resolve_variant_names(system, choice.names);
  // Archs only matter with a GPU; without one no metadata is fetched for the choice.
  if (check_arch && (device.cuda || device.rocm)) {
    bool changed = false;
    for (auto& decision : choice.resolution.trace) {
      if (!decision.accepted()) {
        continue;
      }
      const auto folder = folder_of(decision.variant, choice.names);
      const auto metadata = folder ? variant_metadata(session, target, *folder) : std::nullopt;
      auto reason = metadata ? arch_mismatch(*metadata, device) : std::nullopt;
      if (!reason) {
        break;  // the best variant that runs here; the rest stay as decided
      }
      decision.rejection = std::move(*reason);
      changed = true;
    }
    if (changed) {
      choice.resolution.trace = variants::sort_decisions(std::move(choice.resolution.trace));
    }
  }
  if (const auto* best = choice.resolution.best()) {
    choice.folder = folder_of(*best, choice.names);
  }
  return choice;
}

const std::vector<std::string>& bytecode_ignore_patterns() {
  static const std::vector<std::string> patterns = {"*.pyc", "**/__pycache__/**"};
  return patterns;
}

LoadResult<void> download_variant(const Session& session, const Target& target,
                                  const std::string& folder) {
  const cache::PatternFilter filter(std::vector<std::string>{fmt::format("build/{}/*", folder)},
                                    bytecode_ignore_patterns());
  auto snapshot = session.cache().snapshot_download(kernel_ref(target.repo), target.commit, filter);
  if (!snapshot) {
    return tl::unexpected(as_load_error(
        session.offline() ? LoadErrorKind::not_found : LoadErrorKind::io, snapshot.error()));
  }
  return {};
}

std::string corrupt_message(const Target& target, const std::string& folder,
                            const CorruptFile& file, bool offline) {
  const auto name = fmt::format("build/{}/{}", folder, file.relative_path);
  if (offline) {
    return fmt::format(
        "cached file \"{}\" of {} (commit {}) is corrupted: {}; remove \"{}\" and load the kernel "
        "again with network access (or run `kernelhub download`) to fetch it again",
        name, target.repo.str(), target.commit, file.reason, file.blob.string());
  }
  return fmt::format("cached file \"{}\" of {} (commit {}) is still corrupted after fetching it "
                     "again: {}",
                     name, target.repo.str(), target.commit, file.reason);
}

// Online, a corrupted file is removed and fetched again, once; offline it is refused.
LoadResult<void> verify_variant(const Session& session, const Target& target,
                                const std::string& folder, const fs::path& variant_path) {
  for (int attempt = 0;; ++attempt) {
    auto corrupt = find_corrupt_files(variant_path, session.stamp_root());
    if (!corrupt) {
      return tl::unexpected(as_load_error(LoadErrorKind::io, corrupt.error()));
    }
    if (corrupt->empty()) {
      return {};
    }
    if (session.offline() || attempt > 0) {
      return load_fail(LoadErrorKind::io,
                       corrupt_message(target, folder, corrupt->front(), session.offline()));
    }
    for (const auto& file : *corrupt) {
      remove_corrupt_file(file, session.stamp_root());
    }
    if (auto again = download_variant(session, target, folder); !again) {
      return again;
    }
  }
}

std::string no_variant_message(const Target& target, const variants::Resolution& resolution) {
  return fmt::format("Cannot find a build variant for this system in {} (revision: {}):\n\n{}",
                     target.repo.str(), target.revision, variants::render_trace(resolution.trace));
}

}  // namespace

HubLoadContext HubLoadContext::from_environment(variants::SystemInfo system, DeviceArch device) {
  const auto env = hub::process_environment();
  HubLoadContext context;
  context.endpoint = hub::endpoint_from(env);
  context.cache_dir = cache::kernels_cache_dir(env);
  context.status_cache_dir = cache::hub_cache_dir(env);
  context.system = std::move(system);
  context.device = std::move(device);
  return context;
}

LoadResult<HubKernel> install_hub_kernel(const HubLoadContext& context,
                                         const HubKernelRequest& request) {
  const Session session(context, request);
  const auto system = KH_LOAD_TRY(system_for(context, request));
  auto target = KH_LOAD_TRY(resolve_target(session, request, request.check_trust,
                                      request.follow_redirects));
  auto choice = KH_LOAD_TRY(choose_variant(session, target, system, context.device, true));
  if (!choice.folder) {
    return load_fail(LoadErrorKind::not_found, no_variant_message(target, choice.resolution));
  }
  if (auto downloaded = download_variant(session, target, *choice.folder); !downloaded) {
    return tl::unexpected(downloaded.error());
  }
  const auto ref = kernel_ref(target.repo);
  const auto variant_path =
      session.cache().repo(ref).snapshot_dir(target.commit) / "build" / *choice.folder;
  std::error_code ec;
  if (!fs::is_directory(variant_path, ec)) {
    return load_fail(LoadErrorKind::not_found,
                     fmt::format("Variant path does not exist: `{}`", variant_path.string()));
  }
  if (auto verified = verify_variant(session, target, *choice.folder, variant_path); !verified) {
    return tl::unexpected(verified.error());
  }
  // The cached files are the hub's; whether the hub's are still the ones the variant's digest
  // names is checked on every load that imports them, signature required or not.
  const bool imported_before = request.already_loaded && request.already_loaded(variant_path);
  if (!imported_before) {
    if (auto matches = check_cached_variant_digest(variant_path, session.stamp_root());
        !matches) {
      return load_fail(LoadErrorKind::import_error, matches.error().message);
    }
  }
  if (request.version && !session.offline() && !target.redirected) {
    // kernels resolves versions offline from refs/v<N>, which a download by commit never writes.
    (void)session.cache().repo(ref).write_ref(fmt::format("v{}", *request.version), target.commit);
  }

  HubKernel kernel;
  kernel.variant_path = variant_path;
  kernel.repo_id = request.repo_id;
  kernel.revision = target.info_revision;
  kernel.commit = target.commit;
  kernel.variant = *choice.folder;
  kernel.resolution = std::move(choice.resolution);
  kernel.warnings = std::move(target.warnings);
  if (kernel.resolution.warning) {
    kernel.warnings.push_back(*kernel.resolution.warning);
  }
  return kernel;
}

LoadResult<HubVariants> hub_kernel_variants(const HubLoadContext& context,
                                            const HubKernelRequest& request) {
  const Session session(context, request);
  const auto system = KH_LOAD_TRY(system_for(context, request));
  auto target = KH_LOAD_TRY(resolve_target(session, request, false, false));
  auto choice = KH_LOAD_TRY(choose_variant(session, target, system, context.device, false));
  return HubVariants{std::move(choice.resolution), std::move(target.warnings)};
}

LoadResult<HubAvailability> has_hub_kernel(const HubLoadContext& context,
                                           const HubKernelRequest& request) {
  const Session session(context, request);
  const auto system = KH_LOAD_TRY(system_for(context, request));
  auto target = resolve_target(session, request, request.check_trust, false);
  if (!target) {
    if (target.error().kind == LoadErrorKind::not_found) {
      return HubAvailability{};
    }
    return tl::unexpected(target.error());
  }
  HubAvailability availability{false, std::move(target->warnings)};
  auto choice = choose_variant(session, *target, system, context.device, true);
  if (!choice) {
    if (choice.error().kind == LoadErrorKind::not_found) {
      return availability;
    }
    return tl::unexpected(choice.error());
  }
  availability.available =
      choice->folder && variant_metadata(session, *target, *choice->folder).has_value();
  return availability;
}

LoadResult<HubRevision> resolve_hub_revision(const HubLoadContext& context,
                                             const HubKernelRequest& request) {
  if (auto choice = check_version_choice(request); !choice) {
    return tl::unexpected(choice.error());
  }
  if (!request.version) {
    return HubRevision{*request.revision, {}};
  }
  const Session session(context, request);
  const auto repo = KH_LOAD_TRY(parse_repo(request.repo_id));
  HubRevision resolved;
  auto commit = resolve_version(session, repo, *request.version, resolved.warnings);
  if (!commit) {
    return tl::unexpected(commit.error());
  }
  resolved.revision = std::move(*commit);
  return resolved;
}

}  // namespace kernelhub::loader
