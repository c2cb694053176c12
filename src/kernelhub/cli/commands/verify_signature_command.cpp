// SPDX-License-Identifier: Apache-2.0
// `kernelhub verify-signature KERNEL [--version N | --revision R] [--all-variants]
// [--filter-unsigned] [--filter-no-digest] [--json]`: the reference's `kernels
// verify-signature`. KERNEL is a Hub repository id, whose variant for this machine (or every
// variant) is downloaded as `kernelhub download` does, or a local path (a variant, a kernel
// directory or its build/). Each variant's metadata.json must carry a Sigstore signature by a
// trusted build workflow (kernels' default policies unless --signer-workflow names others) and
// its files must match the digest in it. Verification itself is offline: the production trusted
// root is compiled in (--trusted-root replaces it). A keyed bundle (`kernel-builder sign`, a
// private hub) is checked against --trusted-key files, else KERNELHUB_TRUSTED_KEYS, else the
// keys a Hub kernel's hub publishes; with none it gets the reference's verdict (an invalid
// bundle). A variant that holds files the digest does not cover (bytecode, links to folders)
// fails too, though the reference says Success: they are outside what was signed. Exit 1 when
// any variant fails.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/cache/cache_location.hpp>
#include <kernelhub/cache/kernel_download.hpp>
#include <kernelhub/cli/command_support.hpp>
#include <kernelhub/cli/commands/commands.hpp>
#include <kernelhub/hub/hub_client.hpp>
#include <kernelhub/loader/signature_requirement.hpp>
#include <kernelhub/loader/trusted_keys.hpp>
#include <kernelhub/util/file_io.hpp>
#include <kernelhub/verify/bundle.hpp>
#include <kernelhub/loader/variant_verify.hpp>
#include <kernelhub/variants/system_detect.hpp>
#include <kernelhub/variants/variant_name.hpp>
#include <kernelhub/verify/signed_variant.hpp>

namespace kernelhub::cli::commands {

namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct VerifySignatureOptions {
  std::string kernel;
  RevisionOptions revision;
  bool all_variants = false;
  bool filter_unsigned = false;
  bool filter_no_digest = false;
  bool json = false;
  std::string trusted_root;
  std::vector<std::string> signer_workflows;
  std::vector<std::string> trusted_keys;
};

struct SignedTarget {
  ordered_json header = ordered_json::object();
  std::vector<fs::path> dirs;
  bool from_hub = false;
};

bool has_keyed_bundle(const std::vector<fs::path>& dirs) {
  return std::any_of(dirs.begin(), dirs.end(), [](const fs::path& dir) {
    const auto bundle = util::read_file(dir / "metadata.json.sigstore");
    return bundle && verify::names_public_key(*bundle);
  });
}

std::vector<fs::path> variant_children(const fs::path& dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory(ec) && variants::parse_variant(entry.path().filename().string())) {
      found.push_back(entry.path());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

SignedTarget find_targets(const VerifySignatureOptions& options) {
  SignedTarget target;
  std::error_code ec;
  if (fs::is_directory(options.kernel, ec)) {
    if (options.revision.given()) {
      throw util::FatalError("--revision and --version cannot be used with a local path");
    }
    target.header["path"] = options.kernel;
    target.dirs = value_or_fatal(loader::local_variant_dirs(options.kernel));
    return target;
  }
  if (!options.revision.given()) {
    throw util::FatalError(fmt::format(
        "a Hub kernel needs --version or --revision (\"{}\" is not a local directory)",
        options.kernel));
  }
  const auto repo = value_or_fatal(hub::RepoId::parse(options.kernel));
  const hub::HubClient client(hub::Endpoint::from_environment());
  const cache::HubCache hub_cache(cache::kernels_cache_dir(hub::process_environment()), client);
  cache::KernelDownloadRequest request;
  request.version = options.revision.version;
  request.revision = options.revision.revision;
  request.all_variants = options.all_variants;
  if (!options.all_variants) {
    const variants::SubprocessRunner runner;
    request.system =
        variants::detect_build_host(runner, variants::DetectOptions::from_environment()).system;
  }
  const auto download = value_or_fatal(cache::download_kernel(hub_cache, repo, request));
  if (download.warning) {
    std::fputs(fmt::format("warning: {}\n", *download.warning).c_str(), stderr);
  }
  target.from_hub = true;
  target.header["repo_id"] = repo.str();
  target.header["commit"] = download.commit;
  target.dirs = options.all_variants ? variant_children(download.path / "build")
                                     : std::vector<fs::path>{download.path};
  return target;
}

bool filtered(verify::SignatureStatus status, const VerifySignatureOptions& options) {
  using verify::SignatureStatus;
  if (status == SignatureStatus::bundle_missing) {
    return options.filter_unsigned;
  }
  if (status == SignatureStatus::metadata_missing || status == SignatureStatus::digest_missing) {
    return options.filter_no_digest;
  }
  return false;
}

// The reference's lines, word for word (kernels/cli/verify_signature.py).
std::string check_text(const std::string& name, const verify::SignatureCheck& check) {
  using verify::SignatureStatus;
  switch (check.status) {
    case SignatureStatus::success:
      if (!check.uncovered.empty()) {
        // Not the reference's line: it says Success beside files its digest skips.
        return fmt::format("❌ {}: kernel metadata is correctly signed, but the variant holds "
                           "files the signed digest does not cover\n{}",
                           name, uncovered_text(check.uncovered));
      }
      if (!check.key_hint.empty()) {
        return fmt::format("✅ {}: kernel metadata is correctly signed with trusted key {} ({})\n",
                           name, check.key_hint, check.key_source);
      }
      return fmt::format("✅ {}: kernel metadata is correctly signed\n", name);
    case SignatureStatus::bundle_missing:
      return fmt::format("❌ {}: cannot verify kernel integrity, signature not found\n", name);
    case SignatureStatus::bundle_invalid:
      return fmt::format("❌ {}: cannot verify kernel integrity, invalid signature bundle:\n{}\n",
                         name, check.reason);
    case SignatureStatus::metadata_invalid:
      return fmt::format("❌ {}: cannot verify kernel integrity, invalid metadata:\n{}\n", name,
                         check.reason);
    case SignatureStatus::metadata_missing:
    case SignatureStatus::digest_missing:
      return fmt::format("❌ {}: cannot verify kernel integrity, metadata does not have a digest\n",
                         name);
    case SignatureStatus::digest_mismatch: {
      std::string out = fmt::format("❌ {}: kernel integrity check failed\n", name);
      for (const auto& violation : check.violations) {
        out += violation.to_string() + "\n";
      }
      if (check.violations.empty() && !check.reason.empty()) {
        out += check.reason + "\n";  // a file that could not be rehashed
      }
      return out + uncovered_text(check.uncovered);
    }
    case SignatureStatus::signature_failure:
      return fmt::format("❌ {}: metadata signature verification failed:\n{}\n", name,
                         check.reason);
  }
  return {};
}

ordered_json check_json(const fs::path& dir, const verify::SignatureCheck& check) {
  ordered_json violations = ordered_json::array();
  for (const auto& violation : check.violations) {
    ordered_json entry = {{"kind", loader::violation_kind_name(violation.kind)}};
    if (!violation.path.empty()) {
      entry["path"] = violation.path;
    }
    entry["message"] = violation.to_string();
    violations.push_back(std::move(entry));
  }
  ordered_json out = {{"variant", dir.filename().string()},
                      {"path", dir.string()},
                      {"result", verify::kind_name(check.status)},
                      {"reason", check.reason.empty() ? ordered_json() : ordered_json(check.reason)},
                      {"violations", violations},
                      {"uncovered", check.uncovered}};
  if (!check.key_hint.empty()) {
    out["key"] = {{"hint", check.key_hint}, {"source", check.key_source}};
  }
  return out;
}

void run_verify_signature(const VerifySignatureOptions& options, RunState& state) {
  std::optional<verify::TrustedRoot> custom_root;
  if (!options.trusted_root.empty()) {
    custom_root = value_or_fatal(verify::load_trusted_root(options.trusted_root));
  }
  const verify::TrustedRoot& root = custom_root ? *custom_root : verify::production_trusted_root();
  const auto policies = options.signer_workflows.empty()
                            ? verify::default_policies()
                            : value_or_fatal(loader::workflow_policies(options.signer_workflows));
  const auto target = find_targets(options);
  // Keys are looked up only for keyed bundles, so a Sigstore-only run asks the hub nothing.
  std::vector<verify::TrustedKey> keys;
  if (has_keyed_bundle(target.dirs)) {
    loader::KeyOptions key_options;
    key_options.files.assign(options.trusted_keys.begin(), options.trusted_keys.end());
    if (target.from_hub) {
      key_options.hub = loader::HubKeySource::from_environment();
    }
    keys = value_or_fatal(loader::resolve_trusted_keys(key_options));
  }
  ordered_json out = target.header;
  out["variants"] = ordered_json::array();
  bool failed = false;
  for (const auto& dir : target.dirs) {
    const auto check = verify::verify_signed_variant(dir, policies, root, keys);
    if (filtered(check.status, options)) {
      continue;
    }
    failed = failed || !check.passed() || !check.uncovered.empty();
    if (options.json) {
      out["variants"].push_back(check_json(dir, check));
    } else {
      std::fputs(check_text(dir.filename().string(), check).c_str(), stdout);
    }
  }
  finish_verdict(out, failed, options.json, state);
}

}  // namespace

void declare_verify_signature(CLI::App& app, RunState& state) {
  auto options = std::make_shared<VerifySignatureOptions>();
  auto* sub = app.add_subcommand("verify-signature");
  sub->add_option("KERNEL", options->kernel,
                  "a Hub repository id (downloaded as `kernelhub download` does), or a build "
                  "variant, a kernel directory or its build/")
      ->required();
  add_revision_options(*sub, options->revision);
  sub->add_flag("--all-variants", options->all_variants,
                "verify every variant of a Hub kernel, not just the one for this machine");
  sub->add_flag("--filter-unsigned", options->filter_unsigned,
                "skip variants without metadata.json.sigstore");
  sub->add_flag("--filter-no-digest", options->filter_no_digest,
                "skip variants without metadata.json or without a digest in it");
  sub->add_flag("--json", options->json, "print the verdict of each variant as JSON");
  sub->add_option("--trusted-root", options->trusted_root,
                  "a Sigstore trusted_root.json to use instead of the compiled-in production "
                  "root");
  sub->add_option("--signer-workflow", options->signer_workflows,
                  "trust this GitHub workflow (https://github.com/ORG/REPO/.github/workflows/"
                  "FILE@REF) instead of the kernels-community build workflows; repeatable");
  sub->add_option("--trusted-key", options->trusted_keys,
                  "a PEM public key file that keyed signatures (kernel-builder sign) may come "
                  "from, instead of KERNELHUB_TRUSTED_KEYS or the hub's published keys; "
                  "repeatable");
  sub->callback([options, &state] {
    options->revision.collect();
    run_verify_signature(*options, state);
  });
}

}  // namespace kernelhub::cli::commands
