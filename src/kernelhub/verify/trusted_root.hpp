// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/util/expected.hpp>
#include <kernelhub/verify/crypto.hpp>

// A Sigstore trusted root (`trusted_root.json`, media type
// application/vnd.dev.sigstore.trustedroot+json;version=0.1): the keys and CAs a bundle must
// lead back to (signatures.md §2.8). The public-good production root is compiled in from
// data/sigstore/trusted_root.json (scripts/generate_sigstore_trusted_root.py), so verifying
// needs no network, unlike the reference's TUF refresh on every call.
namespace kernelhub::verify {

// A closed interval [start, end] in Unix seconds; no end means still valid.
struct ValidityPeriod {
  std::int64_t start = 0;
  std::optional<std::int64_t> end;

  bool contains(std::int64_t time) const { return start <= time && (!end || time <= *end); }
};

// A transparency log (Rekor) or certificate-transparency log key.
struct LogKey {
  std::string base_url;
  std::string key_id;  // raw bytes of logId.keyId
  PublicKey key;       // null when the trusted root's key did not parse (skipped, as 4.5.1)
  ValidityPeriod valid_for;
};

// A Fulcio CA or a timestamp authority: its chain, leaf-most first and root last.
struct CertificateAuthority {
  std::string uri;
  std::vector<Certificate> chain;
  ValidityPeriod valid_for;
};

struct TrustedRoot {
  std::vector<LogKey> tlogs;
  std::vector<LogKey> ctlogs;
  std::vector<CertificateAuthority> certificate_authorities;
  std::vector<CertificateAuthority> timestamp_authorities;

  // The tlog whose logId equals `key_id`, or null.
  const LogKey* find_tlog(std::string_view key_id) const;
  const LogKey* find_ctlog(std::string_view key_id) const;
};

// Parses a trusted_root.json document; a wrong media type, a missing validFor.start or a
// certificate that does not parse fails, naming the JSON path.
util::Expected<TrustedRoot> parse_trusted_root(std::string_view json);
util::Expected<TrustedRoot> load_trusted_root(const std::filesystem::path& path);

// The production root compiled into the binary (parsed once).
const TrustedRoot& production_trusted_root();

}  // namespace kernelhub::verify
