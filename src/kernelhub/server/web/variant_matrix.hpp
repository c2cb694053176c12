// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <kernelhub/server/hub_error.hpp>

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
};

// The variants under build/ at `commit`, sorted by name; none when there is no build/.
HubExpected<std::vector<VariantInfo>> collect_variants(const std::shared_ptr<git_repository>& repo,
                                                       const std::string& commit);

// The sorted, de-duplicated backend names of `variants`.
std::vector<std::string> backends_of(const std::vector<VariantInfo>& variants);

// The matrix (rows: framework and version; columns: compute; cells: the OS/arch builds, each
// a link to its folder) and the table of every variant's archs, stable ABI, digest and
// signature. `tree_base` is the URL path of the revision's tree ("/kernels/ns/n/tree/v1").
std::string render_variant_matrix(const std::vector<VariantInfo>& variants,
                                  const std::string& tree_base);

}  // namespace kernelhub::server::web
