// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <kernelhub/server/hub_error.hpp>
#include <kernelhub/verify/trusted_key.hpp>

struct git_repository;

namespace kernelhub::server::web {

// One `build/<variant>/` folder of a revision, with what its metadata.json says.
struct VariantInfo {
  std::string name;       // the folder name, verbatim
  bool parsed = false;    // the name is one the loader accepts
  std::string framework;  // "torch 2.15", "torch stable ABI 2.11", "tvm-ffi 0.1", "torch (any)"
  // The matrix's row order: torch, stable ABI, tvm-ffi, noarch, unrecognised; newest first.
  int framework_rank = 4;
  std::string framework_version;  // "2.15"; empty for noarch
  std::string compute;    // "cpu", "cu126", "rocm71"; a noarch backend: "cuda", "universal"
  std::string backend;    // "cpu", "cuda", ...: the loader's backend name
  std::string platform;   // "x86_64-linux"; "any" for noarch
  bool stable_abi = false;
  // From metadata.json; empty when it is missing or unreadable (`metadata_error` says why).
  std::vector<std::string> archs;
  std::string license;
  std::string digest;  // "sha256 over 5 files"
  bool signed_ = false;  // metadata.json.sigstore is present
  std::string metadata_error;
  // What this hub found when it checked the variant itself (check_variants); unchecked on the
  // listing page, which only needs the backends.
  struct Integrity {
    bool checked = false;
    std::optional<bool> digest_matches;  // nullopt: no digest to check against
    std::string digest_detail;           // the first violations, or why it was not checked
    std::optional<bool> signature_valid;  // nullopt: no metadata.json.sigstore
    std::string signature_detail;         // "key <hint>", "Sigstore", or why it is not valid
  } integrity;
};

// The variants under build/ at `commit`, sorted by name; none when there is no build/.
HubExpected<std::vector<VariantInfo>> collect_variants(const std::shared_ptr<git_repository>& repo,
                                                       const std::string& commit);

// Checks each variant as the loader would (issue 20 item 9), so the kernel page shows what the
// hub verified rather than what metadata.json claims: its files against the digest in
// metadata.json (the same files the loader hashes: bytecode and the top-level metadata files
// left out), and metadata.json.sigstore over metadata.json, a keyed bundle against `keys` (the
// hub's [signing] trusted keys), a certificate bundle against the production Sigstore root and
// kernels-community's workflows. Blob hashes are remembered by blob id for the life of the
// server, so each stored blob is hashed once, however often the page is shown.
void check_variants(const std::shared_ptr<git_repository>& repo, const std::string& commit,
                    std::vector<VariantInfo>& variants, std::span<const verify::TrustedKey> keys);

// The sorted, de-duplicated backend names of `variants`.
std::vector<std::string> backends_of(const std::vector<VariantInfo>& variants);

// The matrix (rows: framework and version; columns: compute; cells: the OS/arch builds, each
// a link to its folder) and the table of every variant's archs, stable ABI, digest and
// signature. `tree_base` is the URL path of the revision's tree ("/kernels/ns/n/tree/v1").
std::string render_variant_matrix(const std::vector<VariantInfo>& variants,
                                  const std::string& tree_base);

}  // namespace kernelhub::server::web
