// SPDX-License-Identifier: Apache-2.0
// `generate-docs` (hidden): prints docs/cli.md, the reference of both programs, generated
// from their command tables. Both executables carry it, and both print the same document, so
// scripts/update-docs.sh and the drift test can use either.
#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include <kernelhub/cli/cli_reference.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/util/fatal_error.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::cli::commands {

namespace {

struct GenerateDocsOptions {
  bool json = false;
  std::string output;
};

void run_generate_docs(const GenerateDocsOptions& options) {
  const auto programs = describe_all_programs();
  const std::string text = options.json ? render_json(programs) : render_markdown(programs);
  if (options.output.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  if (auto written = util::write_file_atomic(options.output, text); !written) {
    throw util::FatalError(written.error().message);
  }
}

}  // namespace

void declare_generate_docs(CLI::App& app, RunState& /*state*/) {
  auto* sub = app.add_subcommand("generate-docs");
  auto options = std::make_shared<GenerateDocsOptions>();
  sub->add_flag("--json", options->json,
                "print the command model as JSON instead of Markdown (for scripts and tests)");
  sub->add_option("-o,--output", options->output, "write to FILE instead of standard output")
      ->type_name("FILE");
  sub->callback([options] { run_generate_docs(*options); });
}

}  // namespace kernelhub::cli::commands
