// SPDX-License-Identifier: Apache-2.0
// `kernel-builder build-and-upload [DIR] [build options] [upload options]`: `build`, then
// `upload` of what it built. A build that fails, or whose checks fail, uploads nothing.
#include <memory>

#include <CLI/CLI.hpp>

#include <kernelhub/cli/commands/build_upload_steps.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/util/fatal_error.hpp>

namespace kernelhub::cli::commands {

void declare_build_and_upload(CLI::App& app, RunState& state) {
  auto build = std::make_shared<BuildCommandOptions>();
  auto upload = std::make_shared<UploadOptions>();
  auto* sub = app.add_subcommand("build-and-upload");
  add_build_options(*sub, *build);
  add_upload_options(*sub, *upload, false);
  sub->callback([build, upload, &state] {
    run_build(*build, state);
    if (state.exit_code != 0) {
      throw util::FatalError("the build's checks failed (see above); nothing was uploaded");
    }
    upload->dir = build->dir;
    upload->python = build->python;
    upload->no_check = build->skip_checks;
    run_upload(*upload);
  });
}

}  // namespace kernelhub::cli::commands
