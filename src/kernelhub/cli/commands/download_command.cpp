// SPDX-License-Identifier: Apache-2.0
// `kernelhub download REPO_ID (--version N | --revision R) [--all-variants] [--json]`: fetches
// the build variant the `kernels` loader would pick on this machine (or every variant) into
// the huggingface_hub cache ($KERNELS_CACHE, else $HF_HUB_CACHE, else $HF_HOME/hub) and prints
// its path. With HF_HUB_OFFLINE=1 it only looks in the cache.
//
// `kernelhub download PROJECT [--all-variants] [--json]`: the same for every kernel locked in
// PROJECT/kernels.lock, at its locked commit (as `kernels download` does), and then, unlike the
// reference, every downloaded variant is checked against the lock: its files' bytes in the
// cache must hash to the lock's per-variant hash (legacy locks) or to the commit's listing.
// Each locked kernel's publisher is checked first, as `kernelhub lock` and get_kernel check it
// (the reference's download does not): an untrusted one is refused unless --trust-remote-code
// or --trust-repo consents; offline it is skipped with get_kernel's warning, as the cache then
// only gives back what was locked and downloaded online.
#include <filesystem>
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
#include <kernelhub/cli/commands/loader_python.hpp>
#include <kernelhub/cli/commands/kernel_trace_json.hpp>
#include <kernelhub/cli/commands/trust_options.hpp>
#include <kernelhub/hub/hub_client.hpp>
#include <kernelhub/loader/kernel_lock_hub.hpp>
#include <kernelhub/loader/publisher_trust.hpp>
#include <kernelhub/variants/system_detect.hpp>

namespace kernelhub::cli::commands {

namespace {

using nlohmann::ordered_json;

struct DownloadOptions {
  std::string repo_id;  // or a project directory holding kernels.lock
  RevisionOptions revision;
  bool all_variants = false;
  bool json = false;
  std::string python;  // --python: the interpreter whose torch decides the variant
  loader::RemoteCodeTrust trust;  // PROJECT only
};

void run_download(const DownloadOptions& options) {
  const auto repo = value_or_fatal(hub::RepoId::parse(options.repo_id));
  const hub::HubClient client(hub::Endpoint::from_environment());
  const cache::HubCache hub_cache(cache::kernels_cache_dir(hub::process_environment()), client);

  cache::KernelDownloadRequest request;
  request.version = options.revision.version;
  request.revision = options.revision.revision;
  request.all_variants = options.all_variants;
  if (!options.all_variants) {
    request.system = detect_loader_system(options.python);
  }

  const auto result = value_or_fatal(cache::download_kernel(hub_cache, repo, request));
  if (result.warning) {
    std::fputs(fmt::format("warning: {}\n", *result.warning).c_str(), stderr);
  }
  if (options.json) {
    const ordered_json out = {
        {"repo_id", repo.str()},
        {"version", options.revision.version ? ordered_json(*options.revision.version)
                                             : ordered_json()},
        {"revision", options.revision.revision ? ordered_json(*options.revision.revision)
                                               : ordered_json()},
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

ordered_json verification_json(const loader::VariantVerification& check, const std::filesystem::path& path) {
  return ordered_json{
      {"variant", check.variant},     {"path", path.string()},
      {"expected", check.expected},   {"expected_from", check.expected_from},
      {"actual", check.actual},       {"ok", check.ok()},
      {"changed_files", check.changed_files}, {"missing_files", check.missing_files},
  };
}

std::string mismatch_message(const loader::VariantVerification& check) {
  auto message = fmt::format(
      "error: `{}` variant {} at {} does not match its lock: {} has {}, the cached files hash to {}\n",
      check.repo_id, check.variant, check.commit, check.expected_from, check.expected, check.actual);
  for (const auto& file : check.changed_files) {
    message += fmt::format("  changed: {}\n", file);
  }
  for (const auto& file : check.missing_files) {
    message += fmt::format("  missing: {}\n", file);
  }
  if (!check.changed_files.empty() || !check.missing_files.empty()) {
    message += "hint: delete the kernel's folder in the cache and download it again\n";
  } else {
    message += "hint: the repository's files at this commit differ from the locked ones; lock it again\n";
  }
  return message;
}

// Every kernel of PROJECT/kernels.lock at its locked commit, then checked against the lock.
// A kernel that fails to download or to verify is reported and the rest still run, as the
// reference does; any failure makes the exit status 1.
void run_download_project(const DownloadOptions& options, RunState& state) {
  const std::filesystem::path project(options.repo_id);
  const auto lock = value_or_fatal(loader::read_kernel_lock_file(project / "kernels.lock"));
  const hub::HubClient client(hub::Endpoint::from_environment());
  const cache::HubCache hub_cache(cache::kernels_cache_dir(hub::process_environment()), client);

  std::optional<variants::SystemInfo> system;
  if (!options.all_variants) {
    system = detect_loader_system(options.python);
  }
  bool all_ok = true;
  auto kernels = ordered_json::array();
  for (const auto& entry : lock.entries) {
    std::fputs(fmt::format("Downloading kernel: {} (revision: {})\n", entry.repo_id, entry.commit).c_str(),
               stderr);
    ordered_json kernel = {{"repo_id", entry.repo_id}, {"commit", entry.commit}, {"error", nullptr},
                           {"variants", ordered_json::array()}};
    const auto fail = [&](const std::string& message) {
      std::fputs(fmt::format("error: {}\n", message).c_str(), stderr);
      kernel["error"] = message;
      all_ok = false;
    };
    if (!options.trust.covers(entry.repo_id)) {
      if (hub_cache.offline()) {
        std::fputs(fmt::format("warning: {}\n", loader::offline_trust_warning(entry.repo_id)).c_str(),
                   stderr);
      } else if (auto trusted = loader::check_publisher_trust(client, entry.repo_id); !trusted) {
        fail(with_trust_hint(trusted.error().message));
        kernels.push_back(kernel);
        continue;
      }
    }
    auto repo = hub::RepoId::parse(entry.repo_id);
    if (!repo) {
      fail(repo.error().message);
      kernels.push_back(kernel);
      continue;
    }
    cache::KernelDownloadRequest request;
    request.revision = entry.commit;
    request.all_variants = options.all_variants;
    request.system = system;
    auto download = cache::download_kernel(hub_cache, *repo, request);
    if (!download) {
      fail(download.error().message);
      kernels.push_back(kernel);
      continue;
    }
    std::vector<std::string> to_check;
    if (download->chosen) {
      to_check.push_back(*download->chosen);
    } else {
      to_check = download->variants;
    }
    for (const auto& variant : to_check) {
      const auto path = download->snapshot.path / "build" / variant;
      auto check = loader::verify_locked_variant(hub_cache, entry, variant, path);
      if (!check) {
        fail(check.error().message);
        continue;
      }
      kernel["variants"].push_back(verification_json(*check, path));
      if (!check->ok()) {
        std::fputs(mismatch_message(*check).c_str(), stderr);
        all_ok = false;
      } else if (!options.json) {
        std::fputs((path.string() + "\n").c_str(), stdout);
      }
    }
    kernels.push_back(kernel);
  }
  if (options.json) {
    const ordered_json out = {{"lockfile", (project / "kernels.lock").string()}, {"ok", all_ok}, {"kernels", kernels}};
    std::fputs((out.dump(2) + "\n").c_str(), stdout);
  }
  if (!all_ok) {
    state.exit_code = 1;
  }
}

}  // namespace

void declare_download(CLI::App& app, RunState& state) {
  auto options = std::make_shared<DownloadOptions>();
  auto* sub = app.add_subcommand("download");
  sub->add_option("REPO_ID", options->repo_id,
                  "kernel repository, e.g. kernels-community/relu, or a project directory with "
                  "kernels.lock (every locked kernel at its commit, checked against the lock)")
      ->required();
  add_revision_options(*sub, options->revision,
                       "kernel version: the v<N> branch of the repository",
                       "a branch, tag or commit sha instead of a version");
  sub->add_flag("--all-variants", options->all_variants,
                "download every build variant, not just the one for this machine");
  sub->add_flag("--json", options->json, "print the result as JSON on stdout");
  add_loader_python_option(*sub, options->python, "the variant");
  add_trust_options(*sub, options->trust, "; for a PROJECT's locked kernels");
  sub->callback([options, &state] {
    options->revision.collect();
    std::error_code ec;
    const bool consent = options->trust.all || !options->trust.repo_ids.empty();
    if (std::filesystem::is_directory(options->repo_id, ec)) {
      if (options->revision.given()) {
        throw util::FatalError("--version and --revision name a repository's revision; a project's "
                               "kernels are downloaded at their locked commits");
      }
      run_download_project(*options, state);
      return;
    }
    if (!options->revision.given()) {
      throw util::FatalError("give --version N or --revision R (a branch, tag or commit)");
    }
    if (consent) {
      throw util::FatalError("--trust-remote-code and --trust-repo apply to a project's locked "
                             "kernels; downloading one repository runs no publisher check");
    }
    run_download(*options);
  });
}

}  // namespace kernelhub::cli::commands
