// SPDX-License-Identifier: Apache-2.0
// `kernelhub lock PROJECT [--legacy] [--json]`: reads `[tool.kernels.dependencies]` of
// PROJECT/pyproject.toml, resolves each kernel version (and the kernels their variants depend
// on) to a commit and writes PROJECT/kernels.lock byte for byte as `kernels lock` does. With
// --legacy it writes the older format, whose per-variant hashes `kernelhub download PROJECT`
// checks the downloaded files against.
//
// Each kernel's publisher must be trusted (its organization's overview says
// trustedKernelPublisher), as `kernels lock` requires: the same ValueError text and exit
// status 1, and no lock written. --trust-remote-code and --trust-repo give the consent
// get_kernel's trust_remote_code gives (True, or an allowlist of repository ids).
#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/cache/cache_location.hpp>
#include <kernelhub/cache/hub_cache.hpp>
#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/cli/commands/trust_options.hpp>
#include <kernelhub/hub/hub_client.hpp>
#include <kernelhub/loader/kernel_lock_hub.hpp>

namespace kernelhub::cli::commands {

namespace {

using nlohmann::ordered_json;

struct LockOptions {
  std::string project_dir;
  bool legacy = false;
  bool json = false;
  loader::RemoteCodeTrust trust;
};

ordered_json entry_json(const loader::KernelLockEntry& entry) {
  auto variants = ordered_json::object();
  for (const auto& [name, variant] : entry.variants) {
    variants[name] = ordered_json{{"hash", variant.hash}, {"hash_type", variant.hash_type}};
  }
  return ordered_json{
      {"repo_id", entry.repo_id},
      {"version", entry.version ? ordered_json(*entry.version) : ordered_json()},
      {"revision", entry.revision ? ordered_json(*entry.revision) : ordered_json()},
      {"commit", entry.commit},
      {"variants", variants},
  };
}

void run_lock(const LockOptions& options) {
  require_directory(options.project_dir);
  const hub::HubClient client(hub::Endpoint::from_environment());
  const cache::HubCache hub_cache(cache::kernels_cache_dir(hub::process_environment()), client);
  const auto format = options.legacy ? loader::LockFormat::legacy : loader::LockFormat::dependency;
  auto locked = loader::lock_project(hub_cache, options.project_dir, format, options.trust);
  if (!locked) {
    throw util::FatalError(with_trust_hint(locked.error().message));
  }
  const auto& result = *locked;

  if (options.json) {
    auto entries = ordered_json::array();
    for (const auto& entry : result.lock.entries) {
      entries.push_back(entry_json(entry));
    }
    const ordered_json out = {
        {"lockfile", result.file.string()},
        {"format", options.legacy ? "legacy" : "dependency"},
        {"entries", entries},
    };
    std::fputs((out.dump(2) + "\n").c_str(), stdout);
    return;
  }
  // The reference prints nothing; one line per lock on stderr keeps stdout clean for scripts.
  for (const auto& entry : result.lock.entries) {
    const auto asked = entry.version ? fmt::format("version {}", *entry.version)
                                     : fmt::format("revision {}", entry.revision.value_or("-"));
    std::fputs(fmt::format("Locked `{}` ({}) at {}\n", entry.repo_id, asked, entry.commit).c_str(), stderr);
  }
}

}  // namespace

void declare_lock(CLI::App& app, RunState& state) {
  (void)state;
  auto options = std::make_shared<LockOptions>();
  auto* sub = app.add_subcommand("lock");
  sub->add_option("PROJECT", options->project_dir,
                  "the project directory: its pyproject.toml lists [tool.kernels.dependencies]")
      ->required();
  sub->add_flag("--legacy", options->legacy,
                "write the older format (repo_id, sha, per-variant git_lfs_concat hashes) that "
                "older kernels releases read and `kernelhub download` verifies files against");
  sub->add_flag("--json", options->json, "print the locks as JSON on stdout");
  add_trust_options(*sub, options->trust);
  sub->callback([options] { run_lock(*options); });
}

}  // namespace kernelhub::cli::commands
