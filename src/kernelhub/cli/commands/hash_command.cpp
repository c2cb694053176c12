// SPDX-License-Identifier: Apache-2.0
// `kernel-builder hash [DIR] [--write] [--json]`: the SHA-256 digest of each build variant of
// DIR (or of DIR itself when it is a variant), as kernels-data's Digest::hash_variant computes
// it (metadata/digest). `--write` stores it as `digest` in each variant's metadata.json, which
// is what the reference's `hash` always does.
#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/abi/library_discovery.hpp>
#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/metadata/digest.hpp>
#include <kernelhub/metadata/metadata.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>

namespace kernelhub::cli::commands {

namespace {

struct HashOptions {
  std::string dir = ".";
  bool write = false;
  bool json = false;
};

nlohmann::ordered_json digest_json(const metadata::Digest& digest) {
  nlohmann::ordered_json files = nlohmann::ordered_json::object();
  for (const auto& [path, hash] : digest.files) {
    files[path] = hash;
  }
  return {{"algorithm", metadata::to_string(digest.algorithm)}, {"files", files}};
}

void run_hash(const HashOptions& options) {
  require_directory(options.dir);
  const auto variants = value_or_fatal(abi::discover_variants(options.dir));
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& variant : variants) {
    auto digest =
        value_or_fatal(metadata::hash_variant(metadata::DigestAlgorithm::sha256, variant));
    const auto name = variant.lexically_normal().generic_string();
    if (options.write) {
      const auto path = variant / "metadata.json";
      auto meta = value_or_fatal(metadata::read_metadata_file(path));
      meta.digest = digest;
      if (auto written = metadata::write_metadata_file(path, meta); !written) {
        throw util::FatalError(written.error().message);
      }
    }
    if (options.json) {
      out.push_back({{"variant", name}, {"digest", digest_json(digest)}});
      continue;
    }
    std::printf("%s: %s\n", name.c_str(), std::string(metadata::to_string(digest.algorithm)).c_str());
    for (const auto& [path, hash] : digest.files) {
      std::printf("  %s  %s\n", hash.c_str(), path.c_str());
    }
  }
  if (options.json) {
    std::fputs((nlohmann::ordered_json{{"variants", out}}.dump(2) + "\n").c_str(), stdout);
  }
}

}  // namespace

void declare_hash(CLI::App& app, RunState&) {
  auto options = std::make_shared<HashOptions>();
  auto* sub = app.add_subcommand("hash");
  sub->add_option("DIR", options->dir,
                  "a build variant, or a kernel directory whose variants are found in result/, "
                  "build/ or the directory itself")
      ->capture_default_str();
  sub->add_flag("--write", options->write,
                "store each digest in its variant's metadata.json (as the reference does)");
  sub->add_flag("--json", options->json,
                "print {\"variants\": [{\"variant\", \"digest\": {\"algorithm\", \"files\"}}]}");
  sub->callback([options] { run_hash(*options); });
}

}  // namespace kernelhub::cli::commands
