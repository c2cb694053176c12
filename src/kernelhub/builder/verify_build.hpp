// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <kernelhub/builder/build_kernel.hpp>
#include <kernelhub/builder/command_runner.hpp>
#include <kernelhub/builder/file_difference.hpp>
#include <kernelhub/cache/hub_cache.hpp>
#include <kernelhub/hub/hub_types.hpp>
#include <kernelhub/util/diagnostic.hpp>
#include <kernelhub/util/expected.hpp>

// `kernel-builder verify-build` (issue 24 §3): a published variant is rebuilt from the commit
// its provenance names, in the build sandbox, with the published kernel id, and compared with
// what the hub serves, file by file (docs/build.md, "Verifying a published build").
namespace kernelhub::builder {

struct VerifyBuildRequest {
  hub::RepoId repo;
  std::optional<unsigned> version{};
  std::optional<std::string> revision{};  // exactly one of version and revision
  // The published variants to rebuild, by their exact names; empty: every published variant
  // this machine can build.
  std::vector<std::string> variants{};
  // A checkout whose HEAD is the published commit; nullopt: clone provenance.build.origin.
  std::optional<std::filesystem::path> source{};
  // python, builder_version, sandbox, probe_cache, torch_versions: as for `build`; the
  // unique id and the variants are set from the published build.
  BuildOptions build{};
  // Where the temporary checkout goes (a fresh folder under it, removed afterwards unless
  // `keep`); empty: the system's temporary folder.
  std::filesystem::path work_root{};
  bool keep = false;
};

struct VariantVerdict {
  std::string name;
  // The variant's manifest digest: "sha256:" and the SHA-256 over "<path>\0<sha256 base64>\n"
  // for each compared file in path order (metadata.json included), the same for both builds
  // when reproduced; of the published files otherwise.
  std::string digest;
  std::optional<FileDifference> difference;  // nullopt: reproduced
  std::filesystem::path published;           // the variant in the hub cache
  std::filesystem::path rebuilt;             // under the work folder (gone unless kept)

  bool reproduced() const { return !difference; }
};

struct VerifyBuildResult {
  std::string commit;         // the hub commit of the version or revision
  std::string kernel_commit;  // provenance.kernel.commit: the sources' commit
  std::string unique_id;      // of the published kernel id, given to the rebuild
  std::string sources;        // the --source folder, or the origin cloned
  std::filesystem::path work_dir;
  std::vector<VariantVerdict> variants;
  // Published variants this machine could not build (only without request.variants).
  std::vector<std::string> not_rebuilt;

  bool reproduced() const;
};

// Fails (an error, not a verdict) when the revision or a named variant is not on the hub, the
// published metadata.json names no commit or a dirty tree, the --source checkout is at
// another commit, the sources cannot be cloned, or the build fails.
util::Expected<VerifyBuildResult> verify_build(const cache::HubCache& cache,
                                               const VerifyBuildRequest& request,
                                               CommandRunner& runner, util::DiagnosticSink& sink);

}  // namespace kernelhub::builder
