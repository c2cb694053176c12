// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/verify/bundle_verifier.hpp>

#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <kernelhub/verify/check.hpp>
#include <openssl/x509.h>

#include <kernelhub/verify/log_entry.hpp>
#include <kernelhub/verify/signing_certificate.hpp>
#include <kernelhub/verify/timestamp_response.hpp>

namespace kernelhub::verify {

namespace {

constexpr std::size_t k_max_timestamps = 32;

util::Expected<std::vector<std::int64_t>> verified_times(const Bundle& bundle,
                                                         const TrustedRoot& root) {
  std::vector<std::int64_t> times;
  if (!bundle.rfc3161_timestamps.empty()) {
    if (root.timestamp_authorities.empty()) {
      return util::fail(
          "no Timestamp Authorities have been provided to validate this bundle but it contains "
          "a signed timestamp");
    }
    if (bundle.rfc3161_timestamps.size() > k_max_timestamps) {
      return util::fail(fmt::format("too many signed timestamp: {} > {}",
                                    bundle.rfc3161_timestamps.size(), k_max_timestamps));
    }
    std::set<std::string> seen;
    for (const std::string& response : bundle.rfc3161_timestamps) {
      if (!seen.insert(response).second) {
        return util::fail("duplicate timestamp found");
      }
    }
    // The TSA stamps the signature bytes (the DSSE signature for an envelope).
    const std::string signed_bytes =
        bundle.signature ? *bundle.signature
                         : (bundle.dsse && bundle.dsse->signatures.size() == 1
                                ? bundle.dsse->signatures.front()
                                : std::string());
    for (const std::string& response : bundle.rfc3161_timestamps) {
      if (const auto time = verify_timestamp(response, signed_bytes, root)) {
        times.push_back(*time);
      }
    }
  }
  const TransparencyLogEntry& entry = bundle.entry;
  if (entry.integrated_time && *entry.integrated_time != 0 && entry.signed_entry_timestamp) {
    const bool supported = entry.version == "0.0.1" &&
                           (entry.kind == "hashedrekord" || entry.kind == "dsse");
    if (!supported) {
      return util::fail("Integrated time only supported for dsse/hashedrekord 0.0.1 types");
    }
    // Trusted once the signed entry timestamp verifies (below); the order follows sigstore's.
    times.push_back(*entry.integrated_time);
  }
  if (times.empty()) {
    return util::fail("not enough sources of verified time");
  }
  return times;
}

// `times` are the verified times: the log's key must have been valid at the time it vouches
// for, the integrated time its signed entry timestamp promises, or, for an entry without one
// (Rekor v2), every time the TSAs vouch for, the only times such an entry has.
util::Expected<void> verify_log_entry(const Bundle& bundle, const TrustedRoot& root,
                                      const std::vector<std::int64_t>& times) {
  const TransparencyLogEntry& entry = bundle.entry;
  // Only the log the bundle names, and only if the trusted root knows it: a bundle from another
  // Sigstore instance fails here.
  const LogKey* log = root.find_tlog(entry.log_id);
  if (log == nullptr || !log->key) {
    return util::fail(fmt::format("no trusted transparency log with id \"{}\"",
                                  base64_encode(entry.log_id)));
  }
  KH_CHECK(verify_inclusion_proof(entry));
  KH_CHECK(verify_checkpoint(entry, *log));
  if (entry.signed_entry_timestamp && entry.integrated_time) {
    KH_CHECK(verify_signed_entry_timestamp(entry, *log));
    if (!log->valid_for.contains(*entry.integrated_time)) {
      return util::fail("the log's key was not valid at the entry's integrated time");
    }
    return {};
  }
  for (const std::int64_t time : times) {
    if (!log->valid_for.contains(time)) {
      return util::fail("the log's key was not valid at the signed timestamp's time");
    }
  }
  return {};
}

}  // namespace

util::Expected<void> verify_artifact(std::string_view artifact, const Bundle& bundle,
                                     std::span<const GitHubWorkflowPolicy> policies,
                                     const TrustedRoot& root) {
  return verify_artifact(
      artifact, bundle, [&](X509* leaf) { return check_any_policy(leaf, policies); }, root);
}

util::Expected<void> verify_artifact(std::string_view artifact, const Bundle& bundle,
                                     const IdentityCheck& identity, const TrustedRoot& root) {
  const std::vector<std::int64_t> times = KH_TRY(verified_times(bundle, root));
  std::vector<Certificate> chain;
  for (const std::int64_t time : times) {
    chain = KH_TRY(verify_chain_at(bundle.leaf, root, time));
  }
  if (auto sct = verify_embedded_sct(chain, root); !sct) {
    return util::fail("failed to verify SCT on signing certificate: " + sct.error().message);
  }
  KH_CHECK(check_code_signing_profile(bundle.leaf.get()));
  KH_CHECK(identity(bundle.leaf.get()));
  if (auto logged = verify_log_entry(bundle, root, times); !logged) {
    return util::fail("invalid log entry: " + logged.error().message);
  }
  for (const std::int64_t time : times) {
    if (!valid_at(bundle.leaf.get(), time)) {
      return util::fail("invalid signing cert: expired at time of signing");
    }
  }
  if (!bundle.signature) {
    return util::fail("Missing bundle message signature");
  }
  const std::string digest = sha256(artifact);
  if (bundle.message_digest && *bundle.message_digest != digest) {
    return util::fail("Bundle message digest mismatch");
  }
  EVP_PKEY* key = X509_get0_pubkey(bundle.leaf.get());
  if (key == nullptr ||
      !verify_signature(key, digest, *bundle.signature, Prehash::sha256)) {
    return util::fail("Signature is invalid for input");
  }
  KH_CHECK(check_hashedrekord_body(bundle.entry, digest, *bundle.signature, bundle.leaf.get()));
  return {};
}

}  // namespace kernelhub::verify
