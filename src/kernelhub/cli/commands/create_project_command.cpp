// SPDX-License-Identifier: Apache-2.0
// `kernel-builder create-project [DIR] [--target PATH] [--backend B] [--unique-id ID]
// [--force] [--json]`: writes the generated build project of the kernel in DIR (default
// target DIR/build/project), for IDEs (compile_commands.json), hand-driven CMake builds and,
// through its pyproject.toml and setup.py, `pip install -e` (a [torch] or noarch kernel).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <variant>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <kernelhub/builder/build_manifest.hpp>
#include <kernelhub/builder/git_state.hpp>
#include <kernelhub/builder/tvm_ffi_project.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/codegen/create_project.hpp>
#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/metadata/kernel_id.hpp>
#include <kernelhub/util/diagnostic.hpp>
#include <kernelhub/util/fatal_error.hpp>

namespace kernelhub::cli::commands {

namespace {

namespace fs = std::filesystem;

struct CreateProjectOptions {
  std::string dir = ".";
  std::string target;
  std::string backend = "cpu";
  std::string unique_id;
  bool force = false;
  bool json = false;
};

void run_create_project(const CreateProjectOptions& options) {
  const auto kernel_dir = fs::absolute(options.dir).lexically_normal();
  util::DiagnosticCollector diagnostics;
  auto loaded = config::load_build_config(kernel_dir, diagnostics);
  for (const auto& diagnostic : diagnostics.sorted()) {
    std::fputs(util::render(diagnostic).c_str(), stderr);
  }
  if (!loaded) {
    throw util::FatalError(loaded.error().message);
  }
  const auto backend = types::parse_backend(options.backend);
  if (!backend) {
    throw util::FatalError(backend.error().message);
  }
  metadata::UniqueIdSource source;
  if (!options.unique_id.empty()) {
    source.given = options.unique_id;
  }
  if (const auto git = builder::read_git_state(kernel_dir)) {
    source.git_tree_id = git->tree_id;
    source.git_dirty = git->status.dirty;
  }
  const auto unique = metadata::unique_id(source);
  // [tvm-ffi] kernels get the tvm-ffi project (the builder renders it from the same templates).
  const bool tvm_ffi = std::holds_alternative<config::TvmFfi>(loaded->config.framework);
  auto files = tvm_ffi ? builder::tvm_ffi_project(loaded->config, kernel_dir, unique, *backend)
                       : codegen::create_project(loaded->config, kernel_dir, unique, *backend);
  if (!files) {
    throw util::FatalError(files.error().message);
  }
  // pyproject.toml and setup.py: `pip install -e` of the project is an editable dev install.
  if (!tvm_ffi) {
    if (auto added = codegen::add_python_packaging(*files, loaded->config, kernel_dir, unique,
                                                   *backend);
        !added) {
      throw util::FatalError(added.error().message);
    }
  }
  const auto target =
      options.target.empty() ? kernel_dir / "build" / "project" : fs::absolute(options.target);
  const auto overwrite = options.force ? codegen::Overwrite::yes : codegen::Overwrite::no;
  if (auto written = codegen::write_file_set(*files, target, overwrite); !written) {
    const bool refused = !options.force && !codegen::existing_paths(*files, target).empty();
    throw util::FatalError(refused ? written.error().message + "; pass --force to replace them"
                                   : written.error().message);
  }
  // A project inside build/ is the builder's to remove (`clean`); one elsewhere is the user's.
  const auto relative = target.lexically_normal().lexically_relative(kernel_dir / "build");
  if (!relative.empty() && *relative.begin() != ".." && relative != ".") {
    if (auto tagged = builder::mark_generated_folder(target); !tagged) {
      throw util::FatalError(tagged.error().message);
    }
  }
  if (options.json) {
    nlohmann::ordered_json out;
    out["directory"] = target.string();
    out["unique_id"] = unique;
    out["files"] = nlohmann::ordered_json::array();
    for (const auto& file : files->files()) {
      out["files"].push_back(file.path);
    }
    std::puts(out.dump(2).c_str());
  } else {
    std::printf("Wrote the build project to %s\n", target.string().c_str());
  }
}

}  // namespace

void declare_create_project(CLI::App& app, RunState& state) {
  (void)state;
  auto options = std::make_shared<CreateProjectOptions>();
  auto* sub = app.add_subcommand("create-project");
  sub->add_option("DIR", options->dir, "the kernel's folder (holds build.toml)")
      ->capture_default_str();
  sub->add_option("--target", options->target,
                  "folder to write the project to (default: DIR/build/project)");
  sub->add_option("--backend", options->backend, "the backend the project compiles")
      ->capture_default_str();
  sub->add_option("--unique-id", options->unique_id,
                  "the unique part of the kernel id (default: from git, else random)");
  sub->add_flag("--force", options->force, "replace existing project files");
  sub->add_flag("--json", options->json, "print the written files as JSON");
  sub->callback([options] { run_create_project(*options); });
}

}  // namespace kernelhub::cli::commands
