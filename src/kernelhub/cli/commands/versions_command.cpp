// SPDX-License-Identifier: Apache-2.0
// `kernelhub versions REPO_ID [--json]`: the kernel's versions (its v<N> branches; offline,
// the cached refs/v<N>) and, for each, which of its build variants this machine accepts, in
// the words of the reference's `kernels versions`. Offline it answers from refs/, trees/ and
// snapshots/ with no request at all.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/cache/cache_location.hpp>
#include <kernelhub/cache/kernel_download.hpp>
#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/cli/commands/loader_python.hpp>
#include <kernelhub/cli/commands/kernel_trace_json.hpp>
#include <kernelhub/hub/hub_client.hpp>
#include <kernelhub/variants/system_detect.hpp>

namespace kernelhub::cli::commands {

namespace {

using nlohmann::ordered_json;

struct VersionsOptions {
  std::string repo_id;
  bool json = false;
  std::string python;  // --python: the interpreter whose torch decides the traces
};

// The variant names of `commit`. Offline, the cached trees/<sha>.json lists every variant of
// the commit (also those never downloaded), so it comes before the snapshot's build/ folders;
// neither makes a request (the reference still lists the Hub tree offline, loader.md §5.2).
util::Expected<std::vector<std::string>> version_variants(const cache::HubCache& hub_cache,
                                                          const hub::RepoId& repo,
                                                          const std::string& commit) {
  if (hub_cache.offline()) {
    if (auto listing = hub_cache.listing(hub::RepoRef{repo, hub::RepoType::kernel}, commit)) {
      return cache::variant_names(*listing);
    }
  }
  return cache::kernel_variants(hub_cache, repo, commit);
}

void run_versions(const VersionsOptions& options) {
  const auto repo = value_or_fatal(hub::RepoId::parse(options.repo_id));
  const hub::HubClient client(hub::Endpoint::from_environment());
  const cache::HubCache hub_cache(cache::kernels_cache_dir(hub::process_environment()), client);
  const auto system = detect_loader_system(options.python);

  const auto versions = value_or_fatal(cache::kernel_versions(hub_cache, repo));
  ordered_json out = {{"repo_id", repo.str()}, {"versions", ordered_json::array()}};
  if (versions.empty() && !options.json) {
    std::fputs(fmt::format("Repository does not support kernel versions: {}\n", repo.str()).c_str(),
               stdout);
    return;
  }
  for (const auto& version : versions) {
    auto listed = version_variants(hub_cache, repo, version.commit);
    if (!listed && !hub_cache.offline()) {
      throw util::FatalError(listed.error().message);
    }
    if (!listed) {
      // Offline, a version whose commit was never downloaded is reported, not fatal: the
      // others can still be listed from the cache.
      if (options.json) {
        out["versions"].push_back({{"version", version.number},
                                   {"commit", version.commit},
                                   {"variants", nullptr},
                                   {"trace", nullptr},
                                   {"error", listed.error().message}});
      } else {
        std::fputs(fmt::format("Version {}:\n\n  {}\n", version.number, listed.error().message).c_str(),
                   stdout);
      }
      continue;
    }
    const auto& names = *listed;
    const auto resolution = variants::resolve_variant_names(system, names);
    if (options.json) {
      out["versions"].push_back({{"version", version.number},
                                 {"commit", version.commit},
                                 {"variants", names},
                                 {"trace", trace_json(resolution)}});
    } else {
      std::fputs(fmt::format("Version {}:\n\n{}\n", version.number,
                             variants::render_trace(resolution.trace))
                     .c_str(),
                 stdout);
    }
  }
  if (options.json) {
    std::fputs((out.dump(2) + "\n").c_str(), stdout);
  }
}

}  // namespace

void declare_versions(CLI::App& app, RunState& state) {
  (void)state;
  auto options = std::make_shared<VersionsOptions>();
  auto* sub = app.add_subcommand("versions");
  sub->add_option("REPO_ID", options->repo_id, "kernel repository, e.g. kernels-community/relu")
      ->required();
  sub->add_flag("--json", options->json, "print the versions and traces as JSON on stdout");
  add_loader_python_option(*sub, options->python, "the traces");
  sub->callback([options] { run_versions(*options); });
}

}  // namespace kernelhub::cli::commands
