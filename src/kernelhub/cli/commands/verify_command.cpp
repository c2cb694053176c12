// SPDX-License-Identifier: Apache-2.0
// `kernelhub verify [KERNEL] [--version N | --revision R] [--all-variants] [--json]`: rehash
// installed build variants and compare them with the digest in their metadata.json (the
// digest step of the reference's `kernels verify-signature`, without the signature). KERNEL
// is a local path (a variant, a kernel directory or its build/; default ".") or a Hub
// repository id, whose variants are taken from the cache: nothing is downloaded. Files the
// digest does not cover (bytecode, links to folders) fail a variant too. Exit 1 when
// any variant fails.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/cache/cache_location.hpp>
#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/cli/commands/loader_python.hpp>
#include <kernelhub/hub/hub_client.hpp>
#include <kernelhub/loader/variant_verify.hpp>
#include <kernelhub/variants/system.hpp>

namespace kernelhub::cli::commands {

namespace {

using nlohmann::ordered_json;

struct VerifyOptions {
  std::string kernel = ".";
  loader::InfoRequest request;
  RevisionOptions revision;
  bool all_variants = false;
  std::string backend;  // the loader's backend=: "cpu" or the detected backend
  bool filter_no_digest = false;
  bool json = false;
  std::string python;  // --python: the interpreter whose torch decides a Hub kernel's variant
};

struct Target {
  ordered_json header = ordered_json::object();  // kernel, and for a Hub kernel its revision
  std::vector<std::filesystem::path> dirs;
};

Target find_targets(const VerifyOptions& options) {
  Target target;
  std::error_code ec;
  if (std::filesystem::is_directory(options.kernel, ec)) {
    if (options.request.version || options.request.revision) {
      throw util::FatalError("--revision and --version cannot be used with a local path");
    }
    target.header["path"] = options.kernel;
    target.dirs = value_or_fatal(loader::local_variant_dirs(options.kernel));
    return target;
  }
  const auto repo = value_or_fatal(hub::RepoId::parse(options.kernel));
  const hub::HubClient client(hub::Endpoint::from_environment());
  const cache::HubCache hub_cache(cache::kernels_cache_dir(hub::process_environment()), client);
  loader::InstalledRequest request;
  request.revision = options.request;
  request.all_variants = options.all_variants;
  if (!options.all_variants) {
    auto system = detect_loader_system(options.python);
    if (!options.backend.empty()) {
      system.backend = value_or_fatal(variants::select_backend(system.backend, options.backend));
      system.backend_device = true;  // asked for: no cpu variant preferred over it
    }
    request.system = system;
  }
  auto installed = value_or_fatal(loader::installed_variants(hub_cache, repo, request));
  if (installed.revision.warning) {
    std::fputs(fmt::format("warning: {}\n", *installed.revision.warning).c_str(), stderr);
  }
  target.header["repo_id"] = repo.str();
  target.header["revision"] = installed.revision.label;
  target.header["commit"] = installed.revision.commit;
  target.dirs = std::move(installed.dirs);
  return target;
}

bool skipped(const loader::VariantCheck& check, const VerifyOptions& options) {
  return options.filter_no_digest && (check.status == loader::VerifyStatus::metadata_missing ||
                                      check.status == loader::VerifyStatus::digest_missing);
}

ordered_json check_json(const loader::VariantCheck& check) {
  ordered_json violations = ordered_json::array();
  for (const auto& violation : check.violations) {
    ordered_json entry = {{"kind", loader::violation_kind_name(violation.kind)}};
    if (!violation.path.empty()) {
      entry["path"] = violation.path;
    }
    if (!violation.expected.empty() || !violation.got.empty()) {
      entry["expected"] = violation.expected;
      entry["got"] = violation.got;
    }
    entry["message"] = violation.to_string();
    violations.push_back(std::move(entry));
  }
  return {{"variant", check.variant},
          {"path", check.path.string()},
          {"status", loader::to_string(check.status)},
          {"files", check.files},
          {"violations", violations},
          {"uncovered", check.uncovered},
          {"detail", check.detail.empty() ? ordered_json() : ordered_json(check.detail)}};
}

// One line per variant in the reference's ✅/❌ style, violations below a failure.
std::string check_text(const loader::VariantCheck& check) {
  using loader::VerifyStatus;
  const auto& name = check.variant;
  switch (check.status) {
    case VerifyStatus::ok:
      return fmt::format("✅ {}: {} files match the metadata digest\n", name, check.files);
    case VerifyStatus::metadata_missing:
      return fmt::format("❌ {}: cannot verify kernel integrity, metadata.json not found\n", name);
    case VerifyStatus::metadata_invalid:
      return fmt::format("❌ {}: cannot verify kernel integrity, invalid metadata:\n{}\n", name,
                         check.detail);
    case VerifyStatus::digest_missing:
      return fmt::format("❌ {}: cannot verify kernel integrity, metadata does not have a digest\n",
                         name);
    case VerifyStatus::unreadable:
      return fmt::format("❌ {}: cannot verify kernel integrity, {}\n", name, check.detail);
    case VerifyStatus::digest_mismatch: {
      std::string out = fmt::format("❌ {}: kernel integrity check failed\n", name);
      for (const auto& violation : check.violations) {
        out += violation.to_string() + "\n";
      }
      return out + uncovered_text(check.uncovered);
    }
    case VerifyStatus::uncovered_files:
      return fmt::format("❌ {}: {} files match the metadata digest, but the variant holds files "
                         "it does not cover\n{}",
                         name, check.files, uncovered_text(check.uncovered));
  }
  return {};
}

void run_verify(const VerifyOptions& options, RunState& state) {
  const auto target = find_targets(options);
  ordered_json out = target.header;
  out["variants"] = ordered_json::array();
  bool failed = false;
  for (const auto& dir : target.dirs) {
    const auto check = loader::verify_variant_digest(dir);
    if (skipped(check, options)) {
      continue;
    }
    failed = failed || !check.passed();
    if (options.json) {
      out["variants"].push_back(check_json(check));
    } else {
      std::fputs(check_text(check).c_str(), stdout);
    }
  }
  finish_verdict(out, failed, options.json, state);
}

}  // namespace

void declare_verify(CLI::App& app, RunState& state) {
  auto options = std::make_shared<VerifyOptions>();
  auto* sub = app.add_subcommand("verify");
  sub->add_option("KERNEL", options->kernel,
                  "a build variant, a kernel directory or its build/, or a Hub repository id "
                  "whose cached variants are checked")
      ->capture_default_str();
  add_revision_options(*sub, options->revision);
  sub->add_flag("--all-variants", options->all_variants,
                "check every cached variant of a Hub kernel, not just the one for this machine");
  sub->add_option("--backend", options->backend,
                  "choose the variant for this backend (\"cpu\" or the detected one), as the "
                  "loader's backend= does");
  sub->add_flag("--filter-no-digest", options->filter_no_digest,
                "skip variants without metadata.json or without a digest in it");
  sub->add_flag("--json", options->json, "print the verdict of each variant as JSON");
  add_loader_python_option(*sub, options->python, "a Hub kernel's variant");
  sub->callback([options, &state] {
    options->revision.collect();
    options->request.version = options->revision.version;
    options->request.revision = options->revision.revision;
    run_verify(*options, state);
  });
}

}  // namespace kernelhub::cli::commands
