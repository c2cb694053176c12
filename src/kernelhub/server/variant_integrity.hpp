// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include <kernelhub/server/server_settings.hpp>
#include <kernelhub/verify/trusted_key.hpp>

struct git_repository;

// What the hub finds when it checks one `build/<variant>/` folder of a commit itself (issue 20
// item 9), as the loader would: the files against the digest in metadata.json, and
// metadata.json.sigstore over metadata.json. The kernel page shows it; the variant check queue
// computes it once per variant tree after each upload and records it (variant_check_store).
namespace kernelhub::server {

struct VariantIntegrity {
  std::optional<bool> digest_matches;  // nullopt: no digest to check against, or not checked
  std::string digest_detail;           // the first violations, or why it was not checked
  bool signed_ = false;                // metadata.json.sigstore is present
  std::optional<bool> signature_valid;  // nullopt: not signed
  std::string signature_detail;         // "key <hint>", "Sigstore, ...", or why it is not valid

  friend bool operator==(const VariantIntegrity&, const VariantIntegrity&) = default;
};

// The keys a keyed bundle must come from: the hub's [signing] keys, each parsed again (one that
// no longer parses is not trusted).
std::vector<verify::TrustedKey> parse_published_keys(std::span<const PublishedKey> keys);

// The sorted hints of `keys`: what a record remembers, to tell whether the keys changed since.
std::vector<std::string> key_hints(std::span<const PublishedKey> keys);

// Checks the variant folder `folder` ("build/<name>") of `commit`: the files the loader hashes
// (bytecode and the top-level metadata files left out; an LFS file's content read from the
// repository's LFS store, not its pointer) against metadata.json's digest, and the bundle, a
// keyed one against `keys`, a certificate one against the production Sigstore root and
// kernels-community's workflows. Blob hashes are remembered by blob id for the life of the
// process. nullopt when `stop` was requested before it finished (checked between blocks of
// a file).
std::optional<VariantIntegrity> check_variant_integrity(const std::shared_ptr<git_repository>& repo,
                                                        const std::string& commit,
                                                        const std::string& folder,
                                                        std::span<const verify::TrustedKey> keys,
                                                        std::stop_token stop = {});

// Only the signature part of the check again (the digest needs no key): for a record made
// when the hub trusted other keys.
void check_variant_signature(const std::shared_ptr<git_repository>& repo,
                             const std::string& commit, const std::string& folder,
                             std::span<const verify::TrustedKey> keys,
                             VariantIntegrity& integrity);

}  // namespace kernelhub::server
