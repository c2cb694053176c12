// SPDX-License-Identifier: Apache-2.0
// `kernel-builder clean [DIR] [--dry-run] [--json]`: removes what `build` wrote into DIR/build/
// (the variants' files, its generated projects, build trees and records in build/.kernelhub),
// proven by the records the builder keeps, and lists what it keeps and why.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <kernelhub/builder/build_clean.hpp>
#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/cli/commands/loader_python.hpp>
#include <kernelhub/variants/program_runner.hpp>

namespace kernelhub::cli::commands {

namespace {

namespace fs = std::filesystem;

struct CleanOptions {
  std::string dir = ".";
  bool dry_run = false;
  bool json = false;
};

void print_plan(const builder::CleanPlan& plan, const CleanOptions& options) {
  if (options.json) {
    nlohmann::ordered_json out;
    out["dry_run"] = options.dry_run;
    out["removed"] = nlohmann::ordered_json::array();
    for (const auto& folder : plan.folders) {
      out["removed"].push_back(folder.string() + "/");
    }
    for (const auto& file : plan.files) {
      out["removed"].push_back(file.string());
    }
    out["kept"] = nlohmann::ordered_json::array();
    for (const auto& kept : plan.kept) {
      out["kept"].push_back({{"path", kept.path.string()}, {"reason", kept.reason}});
    }
    std::fputs((out.dump(2) + "\n").c_str(), stdout);
    return;
  }
  const char* verb = options.dry_run ? "would remove" : "removed";
  for (const auto& folder : plan.folders) {
    std::printf("%s %s/\n", verb, folder.string().c_str());
  }
  for (const auto& file : plan.files) {
    std::printf("%s %s\n", verb, file.string().c_str());
  }
  for (const auto& kept : plan.kept) {
    std::printf("kept %s: %s\n", kept.path.string().c_str(), kept.reason.c_str());
  }
  if (plan.files.empty() && plan.folders.empty()) {
    std::printf("nothing to clean: kernel-builder has no record of writing anything in build/\n");
  }
}

// A create-project folder that `pip install -e` installed stops importing once removed: say so
// (issue 22 §9). Asks the Python beside this program (else PATH's), only when such a folder
// is being removed; a Python that cannot answer only loses the warning.
void warn_of_editable_installs(const builder::CleanPlan& plan, const CleanOptions& options) {
  if (!builder::removes_an_installable_project(plan)) {
    return;
  }
  const auto listing = variants::SubprocessRunner().run(
      {builder_python("python3"), "-c", std::string(builder::k_editable_installs_script)});
  if (!listing) {
    return;
  }
  const auto installs = builder::parse_editable_installs(*listing);
  for (const auto& [install, folder] : builder::editable_installs_removed(plan, installs)) {
    std::fprintf(stderr,
                 "warning: %s %s/, where the editable install of %s points (pip install -e "
                 "%s): importing it fails until you run create-project and reinstall, or `pip "
                 "uninstall %s`\n",
                 options.dry_run ? "clean would remove" : "removing", folder.c_str(),
                 install.name.c_str(), install.directory.c_str(), install.name.c_str());
  }
}

void run_clean(const CleanOptions& options) {
  require_directory(options.dir);
  const auto kernel_dir = fs::absolute(options.dir).lexically_normal();
  const auto plan = builder::plan_clean(kernel_dir);
  warn_of_editable_installs(plan, options);
  if (!options.dry_run) {
    if (auto applied = builder::apply_clean(plan, kernel_dir); !applied) {
      throw util::FatalError(applied.error().message);
    }
  }
  print_plan(plan, options);
}

}  // namespace

void declare_clean(CLI::App& app, RunState& /*state*/) {
  auto options = std::make_shared<CleanOptions>();
  auto* sub = app.add_subcommand("clean");
  sub->add_option("DIR", options->dir, "the kernel's folder (holds build/)")->capture_default_str();
  sub->add_flag("-n,--dry-run", options->dry_run, "list what would be removed, remove nothing");
  sub->add_flag("--json", options->json, "print the removed and kept paths as JSON");
  sub->callback([options] { run_clean(*options); });
}

}  // namespace kernelhub::cli::commands
