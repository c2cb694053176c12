// SPDX-License-Identifier: Apache-2.0
// `kernel-builder sign [DIR] --key KEY.pem [--variant NAME]...`: signs each built variant's
// metadata.json with a team's private key, writing metadata.json.sigstore as a keyed Sigstore
// bundle (verify/keyed_bundle), so a private hub needs no Fulcio, Rekor or OIDC login.
// `kernel-builder keygen --output KEY.pem`: a new ECDSA P-256 or Ed25519 key pair (KEY.pem and
// KEY.pub), the public half being what `kernelhub serve`'s config.toml trusts.
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <kernelhub/abi/library_discovery.hpp>
#include <kernelhub/builder/variant_selection.hpp>
#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/metadata/digest.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>
#include <kernelhub/util/file_io.hpp>
#include <kernelhub/verify/keyed_bundle.hpp>
#include <kernelhub/verify/signing_key.hpp>
#include <kernelhub/verify/trusted_key.hpp>

namespace kernelhub::cli::commands {

namespace {

namespace fs = std::filesystem;

struct SignOptions {
  std::string dir = ".";
  std::string key;
  std::vector<std::string> variants;
};

struct KeygenOptions {
  std::string output;
  std::string algorithm = "ecdsa-p256";
  bool force = false;
};

// The signature covers metadata.json, and only its digest ties the other files to it: a
// variant without a digest, or whose files moved on since it was written, would be signed but
// never verify, so it is refused here rather than discovered by the loader.
void check_digest(const fs::path& variant, const std::string& metadata_bytes) {
  const auto metadata = value_or_fatal(
      metadata::parse_metadata(metadata_bytes, (variant / "metadata.json").generic_string()));
  const auto name = variant.generic_string();
  if (!metadata.digest) {
    throw util::FatalError(fmt::format(
        "\"{}\": metadata.json has no digest to sign; run `kernel-builder hash --write` first",
        name));
  }
  const auto actual = value_or_fatal(metadata::hash_variant(metadata.digest->algorithm, variant));
  const auto violations = metadata::validate(*metadata.digest, actual);
  if (!violations.empty()) {
    throw util::FatalError(fmt::format(
        "\"{}\": files differ from metadata.json's digest ({}); rebuild, or run "
        "`kernel-builder hash --write` if the change is wanted, then sign",
        name, violations.front().to_string()));
  }
}

void run_sign(const SignOptions& options) {
  require_directory(options.dir);
  const auto key = value_or_fatal(verify::load_signing_key(options.key));
  auto variants = value_or_fatal(abi::discover_variants(options.dir));
  std::vector<std::string> built;
  for (const fs::path& variant : variants) {
    built.push_back(variant.filename().string());
  }
  std::vector<std::string> chosen;
  for (const std::string& wanted : options.variants) {
    const auto matches = builder::match_variant_name(wanted, built);
    if (matches.empty()) {
      auto message = fmt::format("no built variant \"{}\" in \"{}\"", wanted, options.dir);
      if (!built.empty()) {
        message += fmt::format("; did you mean \"{}\"? (built variants: {})",
                               builder::closest_variant_name(wanted, built),
                               fmt::join(built, ", "));
      }
      throw util::FatalError(message);
    }
    chosen.insert(chosen.end(), matches.begin(), matches.end());
  }
  if (!options.variants.empty()) {
    std::erase_if(variants, [&](const fs::path& variant) {
      return std::find(chosen.begin(), chosen.end(), variant.filename().string()) == chosen.end();
    });
  }
  const std::string algorithm = verify::key_description(key.get());
  for (const fs::path& variant : variants) {
    const std::string metadata_bytes = value_or_fatal(util::read_file(variant / "metadata.json"));
    check_digest(variant, metadata_bytes);
    const std::string bundle = value_or_fatal(verify::write_keyed_bundle(metadata_bytes, key));
    if (auto written = util::write_file_atomic(variant / "metadata.json.sigstore", bundle);
        !written) {
      throw util::FatalError(written.error().message);
    }
    std::printf("%s: signed metadata.json with %s key %s\n",
                variant.lexically_normal().generic_string().c_str(), algorithm.c_str(),
                key.hint().c_str());
  }
}

void write_new_file(const fs::path& path, const std::string& text, mode_t mode, bool force) {
  std::error_code ec;
  if (!force && fs::exists(path, ec)) {
    throw util::FatalError(fmt::format("\"{}\" exists; pass --force to replace it", path.string()));
  }
  if (auto written = util::write_file_atomic(path, text); !written) {
    throw util::FatalError(written.error().message);
  }
  if (::chmod(path.c_str(), mode) != 0) {
    throw util::FatalError(fmt::format("cannot set the mode of \"{}\"", path.string()));
  }
}

void run_keygen(const KeygenOptions& options) {
  const auto algorithm = options.algorithm == "ed25519" ? verify::KeyAlgorithm::ed25519
                                                        : verify::KeyAlgorithm::ecdsa_p256;
  const auto key = value_or_fatal(verify::generate_signing_key(algorithm));
  const fs::path private_path = options.output;
  fs::path public_path = private_path;
  public_path.replace_extension(".pub");
  if (public_path == private_path) {
    public_path += ".pub";
  }
  // The private half first and owner-only: a key readable by others is no team secret. Both
  // paths are checked before either is written, so a refusal leaves nothing half done.
  std::error_code ec;
  if (!options.force && fs::exists(public_path, ec)) {
    throw util::FatalError(
        fmt::format("\"{}\" exists; pass --force to replace it", public_path.string()));
  }
  write_new_file(private_path, key.private_pem(), 0600, options.force);
  write_new_file(public_path, key.public_pem(), 0644, true);
  std::printf("wrote %s (private, keep it secret) and %s (public, trust it in config.toml)\n",
              private_path.string().c_str(), public_path.string().c_str());
  std::printf("%s key %s\n", verify::key_description(key.get()).c_str(), key.hint().c_str());
}

}  // namespace

void declare_sign(CLI::App& app, RunState&) {
  auto options = std::make_shared<SignOptions>();
  auto* sub = app.add_subcommand("sign");
  sub->add_option("DIR", options->dir,
                  "a build variant, or a kernel directory whose variants are found in result/, "
                  "build/ or the directory itself")
      ->capture_default_str();
  sub->add_option("--key", options->key,
                  "PEM private key (ECDSA P-256, Ed25519 or RSA >= 2048 bits, unencrypted), as "
                  "`kernel-builder keygen` or `openssl genpkey` writes")
      ->required();
  sub->add_option("--variant", options->variants,
                  "sign only this variant (a folder name such as torch-cpu); repeatable");
  sub->callback([options] { run_sign(*options); });
}

void declare_keygen(CLI::App& app, RunState&) {
  auto options = std::make_shared<KeygenOptions>();
  auto* sub = app.add_subcommand("keygen");
  sub->add_option("--output,-o", options->output,
                  "where to write the private key (PEM, mode 0600); the public key goes beside "
                  "it with the extension .pub")
      ->required();
  sub->add_option("--algorithm", options->algorithm, "the key type")
      ->check(CLI::IsMember({"ecdsa-p256", "ed25519"}))
      ->capture_default_str();
  sub->add_flag("--force", options->force, "replace existing key files");
  sub->callback([options] { run_keygen(*options); });
}

}  // namespace kernelhub::cli::commands
