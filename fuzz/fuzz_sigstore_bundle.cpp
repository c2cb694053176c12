// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the Sigstore bundle readers and verifiers (verify layer): with
// require_signature on, a variant's metadata.json.sigstore is read and checked before anything
// is imported, so it is untrusted input. Any bytes must give a bundle or an error, and a parsed
// bundle a verdict, never a crash, an out-of-bounds access (ASan), undefined behaviour (UBSan)
// or an exception. Commands: fuzz/README.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <kernelhub/verify/bundle.hpp>
#include <kernelhub/verify/bundle_verifier.hpp>
#include <kernelhub/verify/crypto.hpp>
#include <kernelhub/verify/identity_policy.hpp>
#include <kernelhub/verify/keyed_bundle.hpp>
#include <kernelhub/verify/trusted_root.hpp>

namespace verify = kernelhub::verify;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  // The base64 reader: what it accepts decodes to the same bytes again once re-encoded, and
  // the re-encoding is at most its text without line breaks. (Like Python's b64decode, which
  // the reference uses, it ignores the unused bits of the last character: "cq+=" and "cq8="
  // are the same bytes.)
  if (const auto decoded = verify::base64_decode(text)) {
    const std::string again = verify::base64_encode(*decoded);
    std::size_t breaks = 0;
    for (const char c : text) {
      breaks += (c == '\n' || c == '\r') ? 1 : 0;
    }
    const auto round_trip = verify::base64_decode(again);
    if (!round_trip || *round_trip != *decoded || again.size() != text.size() - breaks) {
      std::abort();
    }
  }

  // The keyed reader (private hubs' `kernel-builder sign` bundles) takes the same bytes; what it
  // accepts is checked against a key, which must give a verdict with a reason, never a crash.
  if (const auto keyed = verify::parse_keyed_bundle(text)) {
    static const auto k_key = verify::generate_signing_key(verify::KeyAlgorithm::ecdsa_p256);
    static const auto k_keys = verify::parse_trusted_keys(k_key->public_pem(), "fuzz");
    const auto verdict = verify::verify_keyed_artifact(text.substr(0, 64), *keyed, *k_keys);
    if (!verdict && verdict.error().message.empty()) {
      std::abort();
    }
  } else if (keyed.error().message.empty()) {
    std::abort();
  }

  const auto bundle = verify::parse_bundle(text);
  if (!bundle) {
    if (bundle.error().message.empty()) {
      std::abort();
    }
    return 0;
  }
  // The parser's contract: a leaf, one log entry, and exactly one kind of content.
  if (!bundle->leaf || bundle->signature.has_value() == bundle->dsse.has_value() ||
      bundle->entry.proof.checkpoint.empty()) {
    std::abort();
  }
  // Real bundles from the seeds verify against the production root with their own signer's
  // policy; anything the fuzzer changed must fail with a reason, not crash.
  static const std::vector<verify::GitHubWorkflowPolicy> k_policies = {
      {"sigstore-conformance/extremely-dangerous-public-oidc-beacon",
       {"https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/"
        ".github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main"}}};
  const auto verdict = verify::verify_artifact(text.substr(0, 64), *bundle, k_policies,
                                               verify::production_trusted_root());
  if (!verdict && verdict.error().message.empty()) {
    std::abort();
  }
  return 0;
}
