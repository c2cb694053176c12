// SPDX-License-Identifier: Apache-2.0
// `kernel-builder verify-build REPO_ID (--version N | --revision R) [--variant NAME]...
// [--source DIR] [--json]`: rebuilds published variants from the commit their provenance names
// and compares them with the hub's, file by file (builder/verify_build.hpp). One line per
// variant: "reproduced <variant> <digest>" or "differs <variant>: <file>: <hint>". Exit
// status 0 when every variant reproduced, 1 when one differs, 2 when it could not be checked.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/builder/probe_cache.hpp>
#include <kernelhub/builder/verify_build.hpp>
#include <kernelhub/cache/cache_location.hpp>
#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/cli/commands/loader_python.hpp>
#include <kernelhub/hub/hub_client.hpp>
#include <kernelhub/util/diagnostic.hpp>
#include <kernelhub/util/fatal_error.hpp>

namespace kernelhub::cli::commands {

namespace {

using nlohmann::ordered_json;

constexpr int k_exit_differs = 1;
constexpr int k_exit_error = 2;

struct VerifyBuildOptions {
  std::string repo_id;
  RevisionOptions revision;
  std::vector<std::string> variants;
  std::string source;
  std::string python = "python3";
  std::string token;
  bool no_sandbox = false;
  bool keep = false;
  bool json = false;
  bool verbose = false;
};

void print_verdicts(const builder::VerifyBuildResult& result, const std::string& repo, bool json) {
  if (json) {
    ordered_json variants = ordered_json::array();
    for (const auto& variant : result.variants) {
      variants.push_back({{"name", variant.name},
                          {"reproduced", variant.reproduced()},
                          {"digest", variant.digest},
                          {"file", variant.difference ? ordered_json(variant.difference->path)
                                                      : ordered_json()},
                          {"hint", variant.difference ? ordered_json(variant.difference->hint)
                                                      : ordered_json()},
                          {"published", variant.published.string()}});
    }
    const ordered_json out = {{"repo_id", repo},
                              {"commit", result.commit},
                              {"kernel_commit", result.kernel_commit},
                              {"unique_id", result.unique_id},
                              {"sources", result.sources},
                              {"reproduced", result.reproduced()},
                              {"variants", variants},
                              {"not_rebuilt", result.not_rebuilt},
                              {"error", nullptr}};
    std::fputs((out.dump(2) + "\n").c_str(), stdout);
    return;
  }
  for (const auto& name : result.not_rebuilt) {
    std::fputs(fmt::format("kernel-builder: note: {} is published but cannot be built on this "
                           "machine; not verified\n", name).c_str(), stderr);
  }
  for (const auto& variant : result.variants) {
    if (variant.difference) {
      std::fputs(fmt::format("differs {}: {}: {}\n", variant.name, variant.difference->path,
                             variant.difference->hint).c_str(), stdout);
    } else {
      std::fputs(fmt::format("reproduced {} {}\n", variant.name, variant.digest).c_str(), stdout);
    }
  }
}

void run_verify_build(const VerifyBuildOptions& options, RunState& state) {
  auto repo = hub::RepoId::parse(options.repo_id);
  const auto fail = [&](const std::string& message) {
    std::fputs(fmt::format("kernel-builder: error: {}\n", message).c_str(), stderr);
    if (options.json) {
      const ordered_json out = {{"repo_id", options.repo_id}, {"reproduced", false},
                                {"error", message}};
      std::fputs((out.dump(2) + "\n").c_str(), stdout);
    }
    state.exit_code = k_exit_error;
  };
  if (!repo) {
    fail(repo.error().message);
    return;
  }
  auto endpoint = hub::Endpoint::from_environment();
  if (!options.token.empty()) {
    endpoint.token = options.token;
  }
  const hub::HubClient client(endpoint);
  const cache::HubCache hub_cache(cache::kernels_cache_dir(hub::process_environment()), client);

  builder::VerifyBuildRequest request{.repo = *repo};
  request.version = options.revision.version;
  request.revision = options.revision.revision;
  request.variants = options.variants;
  if (!options.source.empty()) {
    request.source = options.source;
  }
  request.keep = options.keep;
  request.build.python = builder_python(options.python);
  request.build.builder_version = KERNELHUB_VERSION;
  request.build.probe_cache = builder::probe_cache_dir();
  const char* no_sandbox = std::getenv("KERNELHUB_NO_SANDBOX");
  if (options.no_sandbox ||
      (no_sandbox != nullptr && *no_sandbox != '\0' && std::string_view(no_sandbox) != "0")) {
    // A published build made in the sandbox records nothing of it but `sandboxed` (absent);
    // one rebuilt without it says `sandboxed: false`, so metadata.json will differ.
    request.build.sandbox = builder::Sandboxing::off;
  }
  builder::SubprocessCommandRunner runner(options.verbose ? builder::ToolOutput::stream
                                                          : builder::ToolOutput::on_failure);
  util::DiagnosticCollector diagnostics;
  auto result = builder::verify_build(hub_cache, request, runner, diagnostics);
  for (const auto& diagnostic : diagnostics.sorted()) {
    std::fputs(util::render(diagnostic).c_str(), stderr);
  }
  if (!result) {
    fail(result.error().message);
    return;
  }
  if (options.keep) {
    std::fputs(fmt::format("kernel-builder: note: kept the sources and the rebuild in {}\n",
                           result->work_dir.string()).c_str(), stderr);
  }
  print_verdicts(*result, repo->str(), options.json);
  if (result->variants.empty()) {
    fail("none of the published variants can be built on this machine");
  } else if (!result->reproduced()) {
    state.exit_code = k_exit_differs;
  }
}

}  // namespace

void declare_verify_build(CLI::App& app, RunState& state) {
  auto options = std::make_shared<VerifyBuildOptions>();
  auto* sub = app.add_subcommand("verify-build");
  sub->add_option("REPO_ID", options->repo_id, "kernel repository, e.g. kernels-community/relu")
      ->required();
  add_revision_options(*sub, options->revision);
  sub->add_option("--variant", options->variants,
                  "verify this published variant (repeatable; default: every published variant "
                  "this machine can build)")
      ->allow_extra_args(false);
  sub->add_option("--source", options->source,
                  "a checkout of the kernel at the published commit (default: clone the origin "
                  "its provenance records)");
  sub->add_option("--python", options->python,
                  "the Python interpreter whose torch the kernel is rebuilt against (python3: "
                  "the one beside kernel-builder when it has one, else PATH's)")
      ->capture_default_str();
  sub->add_option("--token", options->token, "Hub token (default: HF_TOKEN or the token file)");
  sub->add_flag("--no-sandbox", options->no_sandbox,
                "rebuild outside the build sandbox (also KERNELHUB_NO_SANDBOX=1); the rebuilt "
                "metadata.json then records it and differs from a sandboxed build's");
  sub->add_flag("--keep", options->keep,
                "keep the temporary checkout and the rebuilt variants, and say where");
  sub->add_flag("--json", options->json,
                "print the verdicts as JSON (reproduced, digest, file and hint per variant)");
  sub->add_flag("-v,--verbose", options->verbose, "show CMake's and ninja's output as they run");
  sub->callback([options, &state] {
    options->revision.collect();
    if (!options->revision.given()) {
      throw util::FatalError("give --version N or --revision R (a branch, tag or commit)");
    }
    run_verify_build(*options, state);
  });
}

}  // namespace kernelhub::cli::commands
