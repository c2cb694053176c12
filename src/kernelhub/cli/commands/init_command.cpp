// SPDX-License-Identifier: Apache-2.0
// `kernel-builder init [PATH] [--name OWNER/REPO] [--backends B...] [--license L]
// [--overwrite] [--json]`: renders a new kernel project from the embedded templates, writes
// it in one step (nothing when a file would be overwritten without --overwrite), then runs
// `git init` there and stages the files.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/codegen/file_set.hpp>
#include <kernelhub/codegen/git_repo.hpp>
#include <kernelhub/codegen/init_project.hpp>
#include <kernelhub/codegen/init_request.hpp>
#include <kernelhub/util/fatal_error.hpp>

namespace kernelhub::cli::commands {

namespace {

namespace fs = std::filesystem;

struct InitOptions {
  std::string path;
  std::string name;
  std::vector<std::string> backends;
  std::string license = "Apache-2.0";
  bool overwrite = false;
  bool json = false;
};

void run_init(InitOptions options, const CLI::App& command) {
  std::optional<std::string> path =
      command.count("PATH") > 0 ? std::optional<std::string>(options.path) : std::nullopt;
  if (!path) {
    path = codegen::take_trailing_path(options.backends);
  }
  const auto name =
      command.count("--name") > 0 ? std::optional<std::string>(options.name) : std::nullopt;
  // What --backends took, for the errors that a path typed after it would explain.
  const auto backends_took = [&options, &path]() -> std::string {
    if (path || options.backends.empty()) {
      return {};
    }
    return fmt::format(" (--backends took {}: put PATH before --backends, or end the list with "
                       "--)",
                       fmt::join(options.backends, ", "));
  };
  auto target = codegen::resolve_init_target(path, name, fs::current_path());
  if (!target) {
    throw util::FatalError(target.error().message + backends_took());
  }
  if (options.license.empty()) {
    throw util::FatalError("--license must not be empty");
  }
  auto backends = codegen::resolve_init_backends(options.backends);
  if (!backends) {
    throw util::FatalError(backends.error().message + backends_took());
  }
  if (target->name.given_repo != target->name.display_name) {
    std::fprintf(stderr,
                 "note: the kernel is named \"%s\", not \"%s\" (kernel names use '-' where the "
                 "repository has '_'); its Python package is \"%s\"\n",
                 target->name.display_name.c_str(), target->name.given_repo.c_str(),
                 target->name.python_name.c_str());
  }
  codegen::InitProject project{target->name, options.license, std::move(*backends)};
  const auto files = value_or_fatal(codegen::render_init_project(project));

  const auto overwrite = options.overwrite ? codegen::Overwrite::yes : codegen::Overwrite::no;
  if (auto written = codegen::write_file_set(files, target->directory, overwrite); !written) {
    const bool refused = overwrite == codegen::Overwrite::no &&
                         !codegen::existing_paths(files, target->directory).empty();
    throw util::FatalError(refused ? written.error().message +
                                         "; pass --overwrite to replace them (other files are kept)"
                                   : written.error().message);
  }
  if (auto staged = codegen::init_repository_and_stage_all(target->directory); !staged) {
    throw util::FatalError(staged.error().message);
  }

  if (options.json) {
    nlohmann::ordered_json out;
    out["repo_id"] = target->name.repo_id;
    out["directory"] = target->directory.string();
    out["backends"] = codegen::init_context(project)["backends"];
    out["files"] = nlohmann::ordered_json::array();
    for (const auto& file : files.files()) {
      out["files"].push_back(file.path);
    }
    std::puts(out.dump(2).c_str());
  } else {
    std::printf("Initialized %s at %s\n", target->name.repo_id.c_str(),
                target->directory.string().c_str());
  }
}

}  // namespace

void declare_init(CLI::App& app, RunState& state) {
  (void)state;  // init either succeeds or throws; it has no "found problems" status
  auto options = std::make_shared<InitOptions>();
  auto* sub = app.add_subcommand("init");
  sub->add_option("PATH", options->path,
                  "folder to create the project in; OWNER/REPO here names the kernel and "
                  "creates ./REPO");
  sub->add_option("--name", options->name, "the kernel's Hub repository, OWNER/REPO");
  sub->add_option("--backends", options->backends,
                  "backends to scaffold: all, cpu, cuda, metal, rocm, xpu (default: cuda; metal "
                  "on macOS)")
      ->expected(1, -1);
  sub->add_option("--license", options->license, "the kernel's license")->capture_default_str();
  sub->add_flag("--overwrite", options->overwrite,
                "replace existing project files; other files in the folder are kept");
  sub->add_flag("--json", options->json, "print the result as JSON");
  sub->callback([options, sub] { run_init(*options, *sub); });
}

}  // namespace kernelhub::cli::commands
