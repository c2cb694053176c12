// SPDX-License-Identifier: Apache-2.0
// `kernelhub info KERNEL [--revision R | --version N] [--json]`: the reference's `kernels
// info`. KERNEL is a local kernel directory (its build/ variants) or a Hub repository id; with
// HF_HUB_OFFLINE=1 a Hub kernel is described from the cache alone.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <kernelhub/cache/cache_location.hpp>
#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/hub/hub_client.hpp>
#include <kernelhub/loader/kernel_info.hpp>

namespace kernelhub::cli::commands {

namespace {

struct InfoOptions {
  std::string kernel;
  loader::InfoRequest request;
  unsigned version_value = 0;
  std::string revision_value;
  bool json = false;
};

loader::KernelInfo describe(const InfoOptions& options) {
  std::error_code ec;
  // As the reference: an existing directory wins over a repository id of the same spelling.
  if (std::filesystem::is_directory(options.kernel, ec)) {
    if (options.request.version || options.request.revision) {
      throw util::FatalError("--revision and --version cannot be used with a local path");
    }
    return value_or_fatal(loader::local_kernel_info(options.kernel));
  }
  const auto repo = value_or_fatal(hub::RepoId::parse(options.kernel));
  const hub::HubClient client(hub::Endpoint::from_environment());
  const cache::HubCache hub_cache(cache::kernels_cache_dir(hub::process_environment()), client);
  return value_or_fatal(loader::hub_kernel_info(hub_cache, repo, options.request));
}

void run_info(const InfoOptions& options) {
  const auto info = describe(options);
  for (const auto& warning : info.warnings) {
    std::fputs(fmt::format("warning: {}\n", warning).c_str(), stderr);
  }
  if (options.json) {
    // ensure_ascii, as Python's json.dumps, so the bytes match the reference's.
    std::fputs((loader::render_info_json(info).dump(2, ' ', true) + "\n").c_str(), stdout);
    return;
  }
  std::fputs(loader::render_info_text(info).c_str(), stdout);
}

}  // namespace

void declare_info(CLI::App& app, RunState&) {
  auto options = std::make_shared<InfoOptions>();
  auto* sub = app.add_subcommand("info");
  sub->add_option("KERNEL", options->kernel,
                  "a Hub repository id (e.g. kernels-community/relu) or a local kernel directory")
      ->required();
  auto* revision = sub->add_option("--revision", options->revision_value,
                                   "a branch, tag or commit; cannot be used with --version");
  auto* version = sub->add_option("--version", options->version_value,
                                  "the kernel version (the v<N> branch); cannot be used with --revision");
  sub->add_flag("--json", options->json, "print the kernel information as JSON");
  sub->callback([options, version, revision] {
    if (version->count() > 0) {
      options->request.version = options->version_value;
    }
    if (revision->count() > 0) {
      options->request.revision = options->revision_value;
    }
    run_info(*options);
  });
}

}  // namespace kernelhub::cli::commands
