// SPDX-License-Identifier: Apache-2.0
// `kernelhub serve --root DIR [--host H] [--port N] [--token-file F] [limits]`: a
// Hub-compatible server over the bare git repositories under DIR (see src/kernelhub/server).
// The first line on stdout is the base URL, so scripts and tests that pass --port 0 can read
// it. config.toml and the token file are read again on SIGHUP and when they change.
#include <chrono>
#include <cstdint>
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
  // The defaults of server::ServerLimits, in the units an operator types.
  unsigned head_timeout_s = 10;
  unsigned idle_timeout_s = 30;
  unsigned transfer_timeout_s = 30;
  std::uint64_t min_rate_kib = 64;
  std::size_t max_connections = 10000;
  std::size_t max_connections_per_peer = 256;
  unsigned session_hours = 12;
  std::string mirror;
};

void run_serve(const ServeOptions& options) {
  std::error_code ec;
  std::filesystem::create_directories(options.root, ec);
  require_directory(options.root);
  server::ServerSettings settings;
  settings.root = std::filesystem::absolute(options.root);
  settings.max_body_bytes = options.max_body_mib << 20;
  settings.threads = options.threads;
  settings.limits.head_timeout = std::chrono::seconds(options.head_timeout_s);
  settings.limits.idle_timeout = std::chrono::seconds(options.idle_timeout_s);
  settings.limits.transfer_timeout = std::chrono::seconds(options.transfer_timeout_s);
  settings.limits.min_rate_bytes = options.min_rate_kib << 10;
  settings.limits.max_connections = options.max_connections;
  settings.limits.max_connections_per_peer = options.max_connections_per_peer;
  settings.session_lifetime = std::chrono::hours(options.session_hours);
  if (!options.token_file.empty()) {
    settings.token_file = std::filesystem::absolute(options.token_file);
    // Missing at start is a mistyped path; going missing later revokes every token.
    if (!std::filesystem::exists(settings.token_file, ec)) {
      throw util::FatalError(fmt::format("token file \"{}\" does not exist", options.token_file));
    }
    settings.tokens = value_or_fatal(server::read_token_file(options.token_file));
  }
  const char* read_only = options.token_file.empty() ? " (read-only: no --token-file)"
                          : settings.tokens.empty()  ? " (read-only: the token file holds no token)"
                                                     : "";
  auto config = value_or_fatal(server::read_config_file(settings.root));
  settings.organizations = std::move(config.organizations);
  settings.trusted_keys = std::move(config.trusted_keys);
  settings.storage = config.storage;
  settings.http = config.http;
  settings.mirror = std::move(config.mirror);
  if (!options.mirror.empty()) {
    settings.mirror_upstream_override = value_or_fatal(server::normalize_upstream_url(options.mirror));
    settings.mirror.upstream = settings.mirror_upstream_override;
  }
  const std::string mirror_note =
      settings.mirror.enabled() ? fmt::format(", mirroring {}", settings.mirror.upstream) : "";
  const server::ListenAddress address{options.host, options.port};
  const auto on_listening = [&](const std::string& url) {
    std::fprintf(stdout, "%s\n", url.c_str());
    std::fflush(stdout);
    std::fprintf(stderr, "kernelhub: serving %s on %s%s%s\n", options.root.c_str(), url.c_str(),
                 read_only, mirror_note.c_str());
  };
  const auto log = [](const std::string& message) {
    std::fprintf(stderr, "kernelhub: serve: %s\n", message.c_str());
  };
  const auto served = server::serve(std::move(settings), address, on_listening, log);
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
                  "config.toml; created when missing. config.toml is read again on SIGHUP and "
                  "when its mtime or size changes (checked at most once a second); leftovers "
                  "of a killed run (objects/tmp_object_git2_*) are removed at start. One "
                  "server per root: a second one refuses to start")
      ->required();
  sub->add_option("--host", options->host, "address to listen on")->capture_default_str();
  sub->add_option("--port", options->port, "port to listen on; 0 picks a free one")
      ->capture_default_str();
  sub->add_option("--token-file", options->token_file,
                  "file of bearer tokens, one a line, that may write (read again like "
                  "config.toml); without it, or while it is empty or missing, the server is "
                  "read-only");
  sub->add_option("--max-body-mib", options->max_body_mib,
                  "largest commit body accepted, in MiB (larger ones get 413 before they are "
                  "read; other bodies are small JSON, capped at 16 MiB)")
      ->capture_default_str();
  sub->add_option("--threads", options->threads,
                  "threads, each serving its share of the connections (a connection waiting "
                  "for bytes holds none)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  sub->add_option("--head-timeout", options->head_timeout_s,
                  "seconds to receive a request's line and headers (64 KiB at most), from "
                  "its first byte; then the connection is closed")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  sub->add_option("--idle-timeout", options->idle_timeout_s,
                  "seconds a kept-alive connection may wait for its next request")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  sub->add_option("--transfer-timeout", options->transfer_timeout_s,
                  "seconds a request body or an answer may take, plus its size at "
                  "--min-rate-kib")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  sub->add_option("--min-rate-kib", options->min_rate_kib,
                  "slowest transfer allowed beyond --transfer-timeout, in KiB/s")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--max-connections", options->max_connections,
                  "connections held at once; more are answered 503 and closed")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  sub->add_option("--max-connections-per-peer", options->max_connections_per_peer,
                  "connections held at once from one IP address; more are answered 503 and "
                  "closed")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  sub->add_option("--session-hours", options->session_hours,
                  "hours a browser's sign-in at /login lasts (pages only; sessions are held "
                  "in memory and end when the server stops)")
      ->capture_default_str()
      ->check(CLI::Range(1, 8760));
  sub->add_option("--mirror", options->mirror,
                  "serve as a read-only pull-through mirror of the hub at this URL (e.g. "
                  "https://huggingface.co): a repository or revision this hub lacks is fetched "
                  "from it, with its commit ids, and served from here after; overrides "
                  "config.toml's [mirror] upstream (see docs/mirror.md)");
  sub->callback([options] { run_serve(*options); });
}

}  // namespace kernelhub::cli::commands
