// SPDX-License-Identifier: Apache-2.0
// `kernelhub download REPO_ID (--version N | --revision R) [--all-variants] [--json]`: fetches
// the build variant the `kernels` loader would pick on this machine (or every variant) into
// the huggingface_hub cache ($KERNELS_CACHE, else $HF_HUB_CACHE, else $HF_HOME/hub) and prints
// its path. With HF_HUB_OFFLINE=1 it only looks in the cache.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/cache/cache_location.hpp>
#include <kernelhub/cache/kernel_download.hpp>
#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/cli/commands/kernel_trace_json.hpp>
#include <kernelhub/hub/hub_client.hpp>
#include <kernelhub/variants/system_detect.hpp>

namespace kernelhub::cli::commands {

namespace {

using nlohmann::ordered_json;

struct DownloadOptions {
  std::string repo_id;
  std::optional<unsigned> version;
  std::optional<std::string> revision;
  // CLI11 fills these; the callback moves them into the optionals above when given.
  unsigned version_value = 0;
  std::string revision_value;
  bool all_variants = false;
  bool json = false;
};

void run_download(const DownloadOptions& options) {
  const auto repo = value_or_fatal(hub::RepoId::parse(options.repo_id));
  const hub::HubClient client(hub::Endpoint::from_environment());
  const cache::HubCache hub_cache(cache::kernels_cache_dir(hub::process_environment()), client);

  cache::KernelDownloadRequest request;
  request.version = options.version;
  request.revision = options.revision;
  request.all_variants = options.all_variants;
  if (!options.all_variants) {
    const variants::SubprocessRunner runner;
    request.system =
        variants::detect_build_host(runner, variants::DetectOptions::from_environment()).system;
  }

  const auto result = value_or_fatal(cache::download_kernel(hub_cache, repo, request));
  if (result.warning) {
    std::fputs(fmt::format("warning: {}\n", *result.warning).c_str(), stderr);
  }
  if (options.json) {
    const ordered_json out = {
        {"repo_id", repo.str()},
        {"version", options.version ? ordered_json(*options.version) : ordered_json()},
        {"revision", options.revision ? ordered_json(*options.revision) : ordered_json()},
        {"commit", result.commit},
        {"variant", result.chosen ? ordered_json(*result.chosen) : ordered_json()},
        {"path", result.path.string()},
        {"variants", result.variants},
        {"trace", trace_json(result.resolution)},
        {"files", result.snapshot.files},
        {"downloaded", result.snapshot.downloaded},
        {"bytes_downloaded", result.snapshot.bytes_downloaded},
    };
    std::fputs((out.dump(2) + "\n").c_str(), stdout);
    return;
  }
  std::fputs((result.path.string() + "\n").c_str(), stdout);
}

}  // namespace

void declare_download(CLI::App& app, RunState& state) {
  (void)state;
  auto options = std::make_shared<DownloadOptions>();
  auto* sub = app.add_subcommand("download");
  sub->add_option("REPO_ID", options->repo_id, "kernel repository, e.g. kernels-community/relu")
      ->required();
  auto* version = sub->add_option("--version", options->version_value,
                                  "kernel version: the v<N> branch of the repository");
  auto* revision = sub->add_option("--revision", options->revision_value,
                                   "a branch, tag or commit sha instead of a version");
  version->excludes(revision);
  sub->add_flag("--all-variants", options->all_variants,
                "download every build variant, not just the one for this machine");
  sub->add_flag("--json", options->json, "print the result as JSON on stdout");
  sub->callback([options, version, revision] {
    if (version->count() > 0) {
      options->version = options->version_value;
    }
    if (revision->count() > 0) {
      options->revision = options->revision_value;
    }
    if (!options->version && !options->revision) {
      throw util::FatalError("give --version N or --revision R (a branch, tag or commit)");
    }
    run_download(*options);
  });
}

}  // namespace kernelhub::cli::commands
