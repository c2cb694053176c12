// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/signature_requirement.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include <kernelhub/loader/digest_check.hpp>
#include <kernelhub/util/file_io.hpp>
#include <kernelhub/verify/bundle.hpp>

namespace kernelhub::loader {

namespace {

constexpr const char* k_require_signature_variable = "KERNELHUB_REQUIRE_SIGNATURE";
constexpr std::size_t k_violations_shown = 5;

std::string what_failed(const verify::SignatureCheck& check) {
  using verify::SignatureStatus;
  switch (check.status) {
    case SignatureStatus::success:
      return "kernel metadata is correctly signed";
    case SignatureStatus::bundle_missing:
      return "signature not found (no metadata.json.sigstore)";
    case SignatureStatus::bundle_invalid:
      return "invalid signature bundle: " + check.reason;
    case SignatureStatus::metadata_missing:
      return "metadata.json not found";
    case SignatureStatus::signature_failure:
      return "metadata signature verification failed: " + check.reason;
    case SignatureStatus::metadata_invalid:
      return "invalid metadata: " + check.reason;
    case SignatureStatus::digest_missing:
      return "metadata does not have a digest";
    case SignatureStatus::digest_mismatch: {
      std::string out = integrity_failure_text(check.violations, k_violations_shown);
      if (check.violations.empty() && !check.reason.empty()) {
        out += "\n" + check.reason;
      }
      return out;
    }
  }
  return "unknown result";
}

}  // namespace

util::Expected<bool> signature_required_by_environment() {
  const char* raw = std::getenv(k_require_signature_variable);
  if (raw == nullptr) {
    return false;
  }
  std::string value(raw);
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (value == "1" || value == "true" || value == "yes" || value == "on") {
    return true;
  }
  if (value.empty() || value == "0" || value == "false" || value == "no" || value == "off") {
    return false;
  }
  return util::fail(fmt::format("{}=\"{}\" is not a boolean; use 1 or 0",
                                k_require_signature_variable, raw));
}

util::Expected<bool> signature_required(std::optional<bool> requested) {
  if (requested) {
    return *requested;
  }
  return signature_required_by_environment();
}

std::string signature_refusal(const std::filesystem::path& variant_dir,
                              const verify::SignatureCheck& check) {
  return fmt::format("refusing to load kernel variant \"{}\" (signature required): {}",
                     variant_dir.string(), what_failed(check));
}

util::Expected<std::vector<verify::GitHubWorkflowPolicy>> workflow_policies(
    const std::vector<std::string>& uris) {
  constexpr std::string_view k_prefix = "https://github.com/";
  std::map<std::string, std::vector<std::string>> by_repo;
  for (const std::string& uri : uris) {
    const auto workflows = uri.find("/.github/workflows/");
    if (uri.rfind(k_prefix, 0) != 0 || workflows == std::string::npos ||
        workflows <= k_prefix.size()) {
      return util::fail(fmt::format(
          "\"{}\" is not a GitHub workflow URI "
          "(https://github.com/ORG/REPO/.github/workflows/FILE@REF)",
          uri));
    }
    by_repo[uri.substr(k_prefix.size(), workflows - k_prefix.size())].push_back(uri);
  }
  std::vector<verify::GitHubWorkflowPolicy> policies;
  for (auto& [repo, signers] : by_repo) {
    policies.push_back({repo, std::move(signers)});
  }
  return policies;
}

util::Expected<SignerTrust> signer_trust_from_environment() {
  SignerTrust trust;
  if (const char* root = std::getenv("KERNELHUB_SIGSTORE_TRUSTED_ROOT"); root && *root) {
    auto loaded = verify::load_trusted_root(root);
    if (!loaded) {
      return util::fail("KERNELHUB_SIGSTORE_TRUSTED_ROOT: " + loaded.error().message);
    }
    trust.trusted_root = std::move(*loaded);
  }
  const char* signers = std::getenv("KERNELHUB_SIGNER_WORKFLOWS");
  if (signers == nullptr || std::string_view(signers).find_first_not_of(" \t\n") ==
                                std::string_view::npos) {
    trust.policies = verify::default_policies();
    return trust;
  }
  std::vector<std::string> uris;
  std::istringstream words{std::string(signers)};
  for (std::string uri; words >> uri;) {
    uris.push_back(uri);
  }
  auto policies = workflow_policies(uris);
  if (!policies) {
    return util::fail("KERNELHUB_SIGNER_WORKFLOWS: " + policies.error().message);
  }
  trust.policies = std::move(*policies);
  return trust;
}

util::Expected<void> require_signed_variant(const std::filesystem::path& variant_dir,
                                            const KeyOptions& keys) {
  const SignerTrust trust = KH_TRY(signer_trust_from_environment());
  std::vector<verify::TrustedKey> trusted_keys;
  // A bundle that cannot be read is left to the verifier, which reports it in its words.
  if (auto bundle = util::read_file(variant_dir / "metadata.json.sigstore");
      bundle && verify::names_public_key(*bundle)) {
    auto resolved = resolve_trusted_keys(keys);
    if (!resolved) {
      return util::fail(fmt::format(
          "refusing to load kernel variant \"{}\" (signature required): its bundle is signed "
          "with a key, and the trusted keys cannot be read: {}",
          variant_dir.string(), resolved.error().message));
    }
    trusted_keys = std::move(*resolved);
    if (trusted_keys.empty()) {
      return util::fail(fmt::format(
          "refusing to load kernel variant \"{}\" (signature required): its bundle is signed "
          "with a key, and no key is trusted (pass trusted_keys, set KERNELHUB_TRUSTED_KEYS, or "
          "list the key in the hub's config.toml [signing] trusted-keys)",
          variant_dir.string()));
    }
  }
  const auto check = verify::verify_signed_variant(
      variant_dir, trust.policies,
      trust.trusted_root ? *trust.trusted_root : verify::production_trusted_root(), trusted_keys);
  if (!check.passed()) {
    return util::fail(signature_refusal(variant_dir, check));
  }
  // Bytecode outside the digest is never imported (the Python package imports from source);
  // a link to a folder could hide anything the variant's code reaches through it.
  for (const std::string& path : check.uncovered) {
    if (path.ends_with('/')) {
      return util::fail(fmt::format(
          "refusing to load kernel variant \"{}\" (signature required): \"{}\" is a link to a "
          "folder, which the signed digest does not cover",
          variant_dir.string(), path.substr(0, path.size() - 1)));
    }
  }
  return {};
}

}  // namespace kernelhub::loader
