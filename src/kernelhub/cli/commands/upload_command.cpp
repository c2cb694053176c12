// SPDX-License-Identifier: Apache-2.0
// `kernel-builder upload [DIR] [--repo-id ID] [--branch B] [--create-pr] [--output-json F]`:
// publishes the kernel's build variants to the Hub as the reference does (builder.md §8): the
// card as README.md on `main`, `build/<variant>/...` and `benchmarks/` on the version branch,
// stale files deleted, "no changes" when the Hub already has every byte.
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <memory>
#include <set>
#include <string>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <kernelhub/abi/library_discovery.hpp>
#include <kernelhub/builder/build_inputs.hpp>
#include <kernelhub/cli/commands/build_checks.hpp>
#include <kernelhub/cli/commands/build_upload_steps.hpp>
#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/cli/commands/loader_python.hpp>
#include <kernelhub/codegen/card.hpp>
#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/hub/kernel_upload.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>
#include <kernelhub/util/diagnostic.hpp>
#include <kernelhub/util/fatal_error.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::cli::commands {

namespace {

namespace fs = std::filesystem;


// The card for main: the filled CARD.md beside the variants (the reference's bundle has one);
// else the kernel's own CARD.md template filled here, since our build does not write one.
// The filled text goes to a temporary file that lives as long as the returned object.
struct CardFile {
  std::optional<fs::path> path;
  bool temporary = false;
  ~CardFile() {
    if (temporary && path) {
      std::error_code ignored;
      fs::remove(*path, ignored);
    }
  }
};

// The hub the card is filled for: the endpoint the upload goes to, and whether it trusts the
// publisher (its organization overview; any failure reads as untrusted, as the loader's does).
struct CardHub {
  std::string url;
  bool trusted_publisher = false;
  std::string url_prefix;
};

CardHub card_hub(const hub::HubClient& client, const hub::Endpoint& endpoint,
                 const hub::RepoRef& repo) {
  const bool trusted = [&] {
    if (repo.id.owner().empty()) {
      return false;
    }
    auto overview = client.organization_overview(repo.id.owner());
    return overview && overview->trusted_kernel_publisher;
  }();
  return CardHub{endpoint.url, trusted, std::string(hub::repo_type_url_prefix(repo.type))};
}

void find_card(const fs::path& kernel_dir, const fs::path& variants_root,
               const std::string& repo_id, const CardHub& hub, CardFile& card) {
  if (fs::is_regular_file(variants_root / "CARD.md")) {
    card.path = variants_root / "CARD.md";
    return;
  }
  if (!fs::is_regular_file(kernel_dir / "CARD.md")) {
    return;
  }
  util::DiagnosticCollector sink;
  auto loaded = config::load_build_config(kernel_dir, sink);
  if (!loaded) {
    return;
  }
  auto facts = value_or_fatal(codegen::read_card_facts(loaded->config, kernel_dir, repo_id));
  facts.hub_url = hub.url;
  facts.trusted_publisher = hub.trusted_publisher;
  facts.repo_url_prefix = hub.url_prefix;
  const auto text = value_or_fatal(util::read_file(kernel_dir / "CARD.md"));
  const auto filled = value_or_fatal(codegen::render_card(text, "CARD.md", facts));
  std::string pattern = (fs::temp_directory_path() / "kernelhub-card-XXXXXX").string();
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) {
    throw util::FatalError("cannot create a temporary file for the card");
  }
  ::close(fd);
  card.path = pattern;
  card.temporary = true;
  if (auto written = util::write_file_atomic(*card.path, filled); !written) {
    throw util::FatalError(written.error().message);
  }
}

// general.hub of build.toml, when the file reads; the error explains why it was needed.
std::optional<config::Hub> hub_table(const fs::path& dir, std::string* problem) {
  util::DiagnosticCollector sink;
  auto loaded = config::load_build_config(dir, sink);
  if (!loaded) {
    // The diagnostics say what is wrong; they matter only when build.toml was needed.
    *problem = loaded.error().message;
    for (const auto& diagnostic : sink.sorted()) {
      *problem += "\n" + util::render(diagnostic);
    }
    return std::nullopt;
  }
  return loaded->config.general.hub.value_or(config::Hub{});
}

// The version branch: --branch, general.hub.branch, else v<version> of the variants, which
// must all agree.
std::string branch_for(const UploadOptions& options, const std::optional<config::Hub>& hub,
                       const std::set<std::uint64_t>& versions) {
  if (!options.branch.empty()) {
    return options.branch;
  }
  if (hub && hub->branch) {
    return *hub->branch;
  }
  if (versions.size() > 1) {
    throw util::FatalError(fmt::format("found multiple versions in build variants: {}",
                                       fmt::join(versions, ", ")));
  }
  return fmt::format("v{}", versions.empty() ? 0 : *versions.begin());
}

// The page a person opens to see the upload: hf.co for the Hub, else our server's URL.
std::string tree_page(const hub::Endpoint& endpoint, const hub::RepoRef& repo,
                      const std::string& branch) {
  const std::string base =
      endpoint.url == hub::k_default_endpoint ? std::string("https://hf.co") : endpoint.url;
  return fmt::format("{}/{}{}/tree/{}", base, hub::repo_type_url_prefix(repo.type), repo.id.str(),
                     branch);
}

// Refuses a build/ that does not come from the kernel as it is now (builder/build_inputs.hpp):
// another version in build.toml, another kernel id (a new commit, a copied folder), changed
// sources. Only a kernel whose build.toml reads is checked; a folder of variants alone is not.
void refuse_stale_build(const fs::path& dir,
                        const std::map<std::string, std::optional<std::uint64_t>>& variants) {
  util::DiagnosticCollector sink;
  const auto loaded = config::load_build_config(dir, sink);
  if (!loaded) {
    return;
  }
  std::vector<std::string> stale;
  for (const auto& [name, version] : variants) {
    const auto reasons = builder::stale_reasons(dir, loaded->config, name, version);
    if (!reasons.empty()) {
      stale.push_back(fmt::format("  {}: {}", name, fmt::join(reasons, "; ")));
    }
  }
  if (stale.empty()) {
    return;
  }
  throw util::FatalError(fmt::format(
      "build/ does not come from the kernel as it is now, so it is not uploaded:\n{}\n"
      "Run `kernel-builder build {}` (it recompiles only what changed), then upload again; "
      "`kernel-builder clean {}` first removes variants the build no longer makes.",
      fmt::join(stale, "\n"), dir.string(), dir.string()));
}

}  // namespace

void run_upload(const UploadOptions& options) {
  require_directory(options.dir);
  const fs::path dir = fs::canonical(options.dir);
  const auto variant_dirs = value_or_fatal(abi::discover_variants(dir));
  if (variant_dirs.empty()) {
    std::vector<std::string> aside;
    for (const auto& failed : set_aside_variants(dir / "build")) {
      aside.push_back(fmt::format("{} ({})", failed.name, failed.message));
    }
    throw util::FatalError(
        aside.empty()
            ? fmt::format("no build variants in \"{}\"; run `kernel-builder build` first",
                          dir.string())
            : fmt::format("no build variants in \"{}\": the build set aside every variant, "
                          "as none loads: {}",
                          dir.string(), fmt::join(aside, "; ")));
  }
  const fs::path variants_root = variant_dirs.front().parent_path();
  if (!options.quiet) {
    fmt::print("Found {} build variant(s) in {}\n", variant_dirs.size(), variants_root.string());
  }

  std::set<std::uint64_t> versions;
  std::set<std::string> kernel_names;
  std::vector<std::string> dirty;
  std::vector<std::string> unsandboxed;
  std::vector<hub::UploadVariant> variants;
  std::map<std::string, std::optional<std::uint64_t>> built_versions;
  for (const auto& variant_dir : variant_dirs) {
    const auto name = variant_dir.filename().string();
    variants.push_back(hub::UploadVariant{name, variant_dir});
    built_versions[name] = std::nullopt;
    // Unreadable metadata is skipped here, as the reference does; check-builds reports it.
    if (auto metadata = metadata::read_metadata_file(variant_dir / "metadata.json")) {
      versions.insert(metadata->version);
      kernel_names.insert(metadata->name.str());
      built_versions[name] = metadata->version;
      if (metadata->is_dirty()) {
        dirty.push_back(name);
      }
      if (metadata->is_unsandboxed()) {
        unsandboxed.push_back(name);
      }
    }
  }
  if (variants_root == dir / "build") {
    refuse_stale_build(dir, built_versions);
  }
  if (!dirty.empty()) {
    fmt::print(stderr,
               "warning: uploading {} build variant(s) built from a dirty git tree (uncommitted "
               "changes): {}\n",
               dirty.size(), fmt::join(dirty, ", "));
  }
  if (!unsandboxed.empty()) {
    fmt::print(stderr,
               "warning: uploading {} build variant(s) built without the build sandbox "
               "(--no-sandbox): {}\n",
               unsandboxed.size(), fmt::join(unsandboxed, ", "));
  }

  std::string problem;
  const auto hub_config = hub_table(dir, &problem);
  std::string repo_id = options.repo_id;
  if (repo_id.empty()) {
    if (!hub_config) {
      throw util::FatalError(
          fmt::format("--repo-id is not provided and build.toml cannot be read: {}", problem));
    }
    if (!hub_config->repo_id) {
      throw util::FatalError("no `general.hub.repo-id` in build.toml; use --repo-id to specify it");
    }
    repo_id = *hub_config->repo_id;
  }
  const auto type = hub::parse_repo_type(options.repo_type);
  hub::RepoRef repo{value_or_fatal(hub::RepoId::parse(repo_id)), *type};

  hub::KernelUploadRequest request(repo, branch_for(options, hub_config, versions), variants);
  if (fs::is_directory(dir / "benchmarks")) {
    request.benchmarks = dir / "benchmarks";
  }
  request.visibility = options.is_private ? hub::Visibility::private_repo : hub::Visibility::public_repo;
  request.create_pr = options.create_pr ? hub::CreatePr::yes : hub::CreatePr::no;
  std::vector<std::string> variant_names;
  for (const auto& variant : variants) {
    variant_names.push_back(variant.name);
  }
  const auto described = hub::describe_upload(
      kernel_names.size() == 1 ? *kernel_names.begin() : std::string(repo.id.name()),
      versions.size() == 1 ? std::optional(*versions.begin()) : std::nullopt, request.branch,
      variant_names);
  request.commit_message = options.commit_message.empty() ? described.title : options.commit_message;
  request.card_message = options.commit_message.empty() ? described.card_title : options.commit_message;
  request.commit_description =
      options.commit_description.empty() ? described.description : options.commit_description;
  request.pr_title = options.pr_title;
  request.pr_description = options.pr_description;
  if (!options.quiet) {
    request.log = [](const std::string& line) { fmt::print("{}\n", line); };
  }

  // After the arguments are known good, before anything is sent: nothing that fails to load
  // reaches users.
  check_variants_before_upload(variant_dirs, variants_root, builder_python(options.python),
                               options.no_check ? NoCheck::yes : NoCheck::no);

  auto endpoint = hub::Endpoint::from_environment();
  if (!options.token.empty()) {
    endpoint.token = options.token;
  }
  hub::ClientOptions client_options;
  client_options.progress_bar = !options.quiet;
  const hub::HubClient client(endpoint, client_options);
  // The card is filled for the hub it goes to (issue 22 §8), so it is made once that is known.
  CardFile card;
  if (fs::is_regular_file(variants_root / "CARD.md") || fs::is_regular_file(dir / "CARD.md")) {
    find_card(dir, variants_root, repo.id.str(), card_hub(client, endpoint, repo), card);
  }
  request.card = card.path;
  auto outcome = hub::upload_kernel(client, request);
  if (!outcome) {
    throw util::FatalError(outcome.error().message);
  }

  const auto url = tree_page(endpoint, repo, request.branch);
  nlohmann::json pull_requests = nlohmann::json::array();
  nlohmann::json commits = nlohmann::json::array();
  std::set<std::string> listed;
  for (const auto& commit : outcome->commits) {
    commits.push_back({{"branch", commit.branch}, {"commit", commit.commit_oid}, {"url", commit.commit_url}});
    if (commit.pull_request_url && listed.insert(commit.branch).second) {
      pull_requests.push_back({{"branch", commit.branch}, {"url", *commit.pull_request_url}});
    }
  }
  switch (outcome->status) {
    case hub::KernelUploadOutcome::Status::no_changes: fmt::print("No changes to upload.\n"); break;
    case hub::KernelUploadOutcome::Status::pull_request_created:
      for (const auto& pr : pull_requests) {
        fmt::print("Pull request created: {}\n", pr["url"].get<std::string>());
      }
      break;
    case hub::KernelUploadOutcome::Status::uploaded: fmt::print("Kernel uploaded: {}\n", url); break;
  }
  if (!options.output_json.empty()) {
    const nlohmann::json report = {{"status", hub::upload_status_name(outcome->status)},
                                   {"repo_id", repo.id.str()},
                                   {"branch", request.branch},
                                   {"url", url},
                                   {"pull_requests", pull_requests},
                                   {"commits", commits}};
    if (auto written = util::write_file_atomic(options.output_json, report.dump(2) + "\n"); !written) {
      throw util::FatalError(written.error().message);
    }
  }
}

void add_upload_options(CLI::App& command, UploadOptions& options, bool with_dir) {
  if (with_dir) {
    command.add_option("DIR", options.dir, "kernel directory (its build/ holds the variants)")
        ->capture_default_str();
    // build-and-upload has the build's --python and --skip-checks for these.
    command.add_option("--python", options.python,
                       "the interpreter (with torch and kernels) that load-checks a variant "
                       "with no record of a passed load check")
        ->capture_default_str();
    command.add_flag("--no-check", options.no_check,
                     "publish without making sure each variant loads (variants whose load check "
                     "failed stay unpublished)");
  }
  command.add_option("--repo-id", options.repo_id,
                     "Hub repository (default: general.hub.repo-id of build.toml)");
  command.add_option("--branch", options.branch,
                     "branch for the variants (default: general.hub.branch, else v<version>)");
  command.add_option("--repo-type", options.repo_type, "repository type")
      ->check(CLI::IsMember({"kernel", "model"}))
      ->capture_default_str();
  command.add_flag("--private", options.is_private, "create the repository as private");
  command.add_flag("--create-pr", options.create_pr,
                   "open a pull request instead of committing to the branch");
  command.add_option("--commit-message", options.commit_message,
                     "summary of the commits (default: what is uploaded, e.g. \"Upload relu "
                     "version 1: torch-cpu\")");
  command.add_option("--commit-description", options.commit_description,
                     "description of the commits (default: the variants, one a line)");
  command.add_option("--pr-title", options.pr_title,
                     "title of the pull request --create-pr opens (default: the commit "
                     "message); the card's pull request on main gets it with \" (card)\"")
      ->needs("--create-pr");
  command.add_option("--pr-description", options.pr_description,
                     "description of the pull request (default: the commit description)")
      ->needs("--create-pr");
  command.add_option("--output-json", options.output_json,
                     "write {status, repo_id, branch, url, pull_requests, commits} to this file");
  command.add_option("--token", options.token, "Hub token (default: HF_TOKEN or the token file)");
  command.add_flag("-q,--quiet", options.quiet, "print only the outcome");
}

void declare_upload(CLI::App& app, RunState& /*state*/) {
  auto options = std::make_shared<UploadOptions>();
  auto* command = app.add_subcommand("upload");
  add_upload_options(*command, *options, true);
  command->callback([options] { run_upload(*options); });
}

}  // namespace kernelhub::cli::commands
