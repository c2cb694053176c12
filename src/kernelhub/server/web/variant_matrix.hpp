// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <kernelhub/server/hub_error.hpp>
#include <kernelhub/server/server_settings.hpp>
#include <kernelhub/server/variant_integrity.hpp>

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
  std::string tree;  // the folder's git tree id: what the hub's check records are keyed by
  // What this hub found when it checked the variant itself (check_variants); unchecked on the
  // listing page, which only needs the backends.
  enum class Checked {
    no,
    verifying,      // its commit's check is queued or running (VariantCheckQueue)
    at_upload,      // recorded after the commit that brought it (`checked_commit`)
    on_first_view,  // committed before the hub recorded checks: checked when first shown
  };
  Checked checked = Checked::no;
  std::string checked_commit;
  bool signature_rechecked = false;  // the hub's keys changed since the record: checked now
  VariantIntegrity integrity;
};

// The variants under build/ at `commit`, sorted by name; none when there is no build/.
HubExpected<std::vector<VariantInfo>> collect_variants(const std::shared_ptr<git_repository>& repo,
                                                       const std::string& commit);

// What the hub verified of each variant (issue 20 item 9), so the kernel page shows that rather
// than what metadata.json claims (variant_integrity.hpp has what is checked): the record made
// after the upload that brought the variant's tree (variant_check_store.hpp), its signature
// checked again when the hub's `keys` changed since. Without a record: "verifying" while
// `commit`'s check is queued (`verifying`), else, for a tree committed before the hub
// recorded checks, with Fallback::check the check runs now and is recorded; with
// Fallback::none the variant stays unchecked.
enum class Fallback { check, none };
void check_variants(const std::shared_ptr<git_repository>& repo, const std::string& commit,
                    std::vector<VariantInfo>& variants, std::span<const PublishedKey> keys,
                    bool verifying, Fallback fallback = Fallback::check);

// The sorted, de-duplicated backend names of `variants`.
std::vector<std::string> backends_of(const std::vector<VariantInfo>& variants);

// The matrix (rows: framework and version; columns: compute; cells: the OS/arch builds, each
// a link to its folder) and the table of every variant's archs, stable ABI, digest, signature
// and when the hub checked them, under a notice naming the variants whose files do not match
// their digest. `repo_base` is the repository's URL path ("/kernels/ns/n"), `tree_base` that of
// the revision's tree ("/kernels/ns/n/tree/v1").
std::string render_variant_matrix(const std::vector<VariantInfo>& variants,
                                  const std::string& repo_base, const std::string& tree_base);

}  // namespace kernelhub::server::web
