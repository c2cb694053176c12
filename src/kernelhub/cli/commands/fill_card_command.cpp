// SPDX-License-Identifier: Apache-2.0
// `kernel-builder fill-card [DIR] [OUTPUT] [--output F] [--repo-id ID] [--endpoint URL]
// [--trusted-publisher] [--default-template] [--json]`: renders the kernel's card. The template is the kernel's own CARD.md, as in the
// reference (init writes one); a kernel without one gets our templates/card/CARD.md.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/codegen/card.hpp>
#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/hub/endpoint.hpp>
#include <kernelhub/util/diagnostic.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::cli::commands {

namespace {

namespace fs = std::filesystem;

struct FillCardOptions {
  std::string dir = ".";
  std::string output_positional;
  std::string output;
  std::string repo_id;
  std::string endpoint;
  bool trusted_publisher = false;
  bool default_template = false;
  bool json = false;
};

void run_fill_card(const FillCardOptions& options) {
  require_directory(options.dir);
  if (!options.output.empty() && !options.output_positional.empty()) {
    throw util::FatalError("give the output file once: as OUTPUT or with --output, not both");
  }
  const auto kernel_dir = fs::absolute(options.dir).lexically_normal();
  util::DiagnosticCollector diagnostics;
  auto loaded = config::load_build_config(kernel_dir, diagnostics);
  for (const auto& diagnostic : diagnostics.sorted()) {
    std::fputs(util::render(diagnostic).c_str(), stderr);
  }
  const auto kernel = value_or_fatal(std::move(loaded));
  const auto& config = kernel.config;
  auto facts = value_or_fatal(codegen::read_card_facts(
      config, kernel_dir,
      options.repo_id.empty() ? std::nullopt : std::optional<std::string>(options.repo_id)));
  // The hub the card is for: --endpoint, else HF_ENDPOINT as every Hub client reads it.
  facts.hub_url = options.endpoint.empty() ? hub::Endpoint::from_environment().url
                                           : hub::normalize_endpoint(options.endpoint);
  facts.trusted_publisher = options.trusted_publisher;

  const auto own = kernel_dir / "CARD.md";
  std::error_code error;
  const bool use_own = !options.default_template && fs::is_regular_file(own, error);
  const std::string template_text = use_own ? value_or_fatal(util::read_file(own))
                                            : std::string(codegen::default_card_template());
  const std::string template_name = use_own ? std::string("CARD.md") : "templates/card/CARD.md";
  const auto card = value_or_fatal(codegen::render_card(template_text, template_name, facts));

  const auto& output = options.output.empty() ? options.output_positional : options.output;
  if (!output.empty()) {
    if (auto written = util::write_file_atomic(output, card); !written) {
      throw util::FatalError(written.error().message);
    }
  }
  if (options.json) {
    nlohmann::ordered_json out;
    out["template"] = use_own ? own.string() : template_name;
    out["output"] = output.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(output);
    out["context"] = codegen::card_context(facts);
    out["card"] = card;
    std::puts(out.dump(2).c_str());
  } else if (output.empty()) {
    std::fwrite(card.data(), 1, card.size(), stdout);
  } else {
    std::fprintf(stderr, "Generated %s\n", output.c_str());
  }
}

}  // namespace

void declare_fill_card(CLI::App& app, RunState& state) {
  (void)state;
  auto options = std::make_shared<FillCardOptions>();
  auto* sub = app.add_subcommand("fill-card");
  sub->add_option("DIR", options->dir, "the kernel's folder (holds build.toml)")
      ->capture_default_str();
  sub->add_option("OUTPUT", options->output_positional,
                  "file to write the card to (default: standard output)");
  sub->add_option("-o,--output", options->output, "file to write the card to (same as OUTPUT)");
  sub->add_option("--repo-id", options->repo_id,
                  "the Hub repository (default: general.hub.repo-id of build.toml)");
  sub->add_option("--endpoint", options->endpoint,
                  "the hub the card's examples load from (default: HF_ENDPOINT, else "
                  "https://huggingface.co)");
  sub->add_flag("--trusted-publisher", options->trusted_publisher,
                "the hub trusts the repository's publisher: the examples need no "
                "trust_remote_code");
  sub->add_flag("--default-template", options->default_template,
                "render kernelhub's default card even when the kernel has a CARD.md");
  sub->add_flag("--json", options->json,
                "print the template, the context it was rendered with and the card as JSON");
  sub->callback([options] { run_fill_card(*options); });
}

}  // namespace kernelhub::cli::commands
