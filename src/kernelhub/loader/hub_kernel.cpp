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
#include <kernelhub/loader/hub_target.hpp>
#include <kernelhub/loader/kernel_status.hpp>
#include <kernelhub/loader/publisher_trust.hpp>
#include <kernelhub/loader/variant_seal.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>

namespace kernelhub::loader {

namespace fs = std::filesystem;

namespace {

using detail::as_load_error;
using detail::check_version_choice;
using detail::kernel_ref;
using detail::parse_repo;
using detail::resolve_target;
using detail::resolve_version;
using Session = detail::HubSession;
using Target = detail::HubTarget;

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

// The variant's files fetched where missing, then checked: present, each blob against its
// etag and, unless this process imported them before, the files against the digest. What passed
// every check is sealed, so the next load can skip them while nothing changes.
LoadResult<void> fetch_and_check(const Session& session, const Target& target,
                                 const std::string& folder, const fs::path& variant_path,
                                 bool check_digest, const fs::path& seal_file) {
  if (auto downloaded = download_variant(session, target, folder); !downloaded) {
    return downloaded;
  }
  std::error_code ec;
  if (!fs::is_directory(variant_path, ec)) {
    return load_fail(LoadErrorKind::not_found,
                     fmt::format("Variant path does not exist: `{}`", variant_path.string()));
  }
  // Taken before the checks: a seal is only written when the checks saw what it records.
  const auto before = check_digest ? VariantSeal::take(variant_path) : std::nullopt;
  if (auto verified = verify_variant(session, target, folder, variant_path); !verified) {
    return verified;
  }
  if (!check_digest) {
    return {};
  }
  if (auto matches = check_cached_variant_digest(variant_path, session.stamp_root()); !matches) {
    return load_fail(LoadErrorKind::import_error, matches.error().message);
  }
  if (before) {
    write_seal(variant_path, seal_file, *before, session.seal_settle_seconds());
  }
  return {};
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
  const auto ref = kernel_ref(target.repo);
  const auto repo_cache = session.cache().repo(ref);
  const auto variant_path = repo_cache.snapshot_dir(target.commit) / "build" / *choice.folder;
  const auto seal_file =
      seal_path(session.seal_root(), repo_cache.folder(), target.commit, *choice.folder);
  // The cached files are the hub's; whether the hub's are still the ones the variant's digest
  // names is checked on every load that imports them, signature required or not. A variant
  // sealed after those checks, unchanged since, needs none of them again (variant_seal.hpp).
  const bool imported_before = request.already_loaded && request.already_loaded(variant_path);
  if (!seal_holds(variant_path, seal_file)) {
    if (auto checked = fetch_and_check(session, target, *choice.folder, variant_path,
                                       !imported_before, seal_file);
        !checked) {
      return tl::unexpected(checked.error());
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
