// SPDX-License-Identifier: Apache-2.0
// `kernelhub serve --root DIR [--host H] [--port N] [--token-file F]`: a Hub-compatible
// server over the bare git repositories under DIR (see src/kernelhub/server). The first
// line on stdout is the base URL, so scripts and tests that pass --port 0 can read it.
#include <cstdio>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/server/http_server.hpp>
#include <kernelhub/server/server_settings.hpp>
#include <kernelhub/util/fatal_error.hpp>

namespace kernelhub::cli::commands {

namespace {

struct ServeOptions {
  std::string root;
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string token_file;
  std::size_t max_body_mib = 2048;
  std::size_t threads = 32;
};

void run_serve(const ServeOptions& options) {
  std::error_code ec;
  std::filesystem::create_directories(options.root, ec);
  require_directory(options.root);
  server::ServerSettings settings;
  settings.root = std::filesystem::absolute(options.root);
  settings.max_body_bytes = options.max_body_mib << 20;
  settings.threads = options.threads;
  if (!options.token_file.empty()) {
    settings.tokens = value_or_fatal(server::read_token_file(options.token_file));
  }
  settings.organizations = value_or_fatal(server::read_organization_settings(settings.root));
  const server::ListenAddress address{options.host, options.port};
  const auto served = server::serve(std::move(settings), address, [&](const std::string& url) {
    std::fprintf(stdout, "%s\n", url.c_str());
    std::fflush(stdout);
    std::fprintf(stderr, "kernelhub: serving %s on %s%s\n", options.root.c_str(), url.c_str(),
                 options.token_file.empty() ? " (read-only: no --token-file)" : "");
  });
  if (!served) {
    throw util::FatalError(served.error().message);
  }
}

}  // namespace

void declare_serve(CLI::App& app, RunState& /*state*/) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* sub = app.add_subcommand("serve");
  sub->add_option("--root", options->root,
                  "folder of the repositories (<models|datasets|kernels>/<ns>/<name>.git) and "
                  "config.toml; created when missing")
      ->required();
  sub->add_option("--host", options->host, "address to listen on")->capture_default_str();
  sub->add_option("--port", options->port, "port to listen on; 0 picks a free one")
      ->capture_default_str();
  sub->add_option("--token-file", options->token_file,
                  "file of bearer tokens, one a line, that may write; without it the server "
                  "is read-only");
  sub->add_option("--max-body-mib", options->max_body_mib,
                  "largest request body accepted, in MiB (larger ones get 413)")
      ->capture_default_str();
  sub->add_option("--threads", options->threads, "worker threads")->capture_default_str()
      ->check(CLI::Range(1, 1024));
  sub->callback([options] { run_serve(*options); });
}

}  // namespace kernelhub::cli::commands
