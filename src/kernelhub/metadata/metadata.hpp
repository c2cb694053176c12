// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <kernelhub/metadata/digest.hpp>
#include <kernelhub/types/backend.hpp>
#include <kernelhub/types/git_oid.hpp>
#include <kernelhub/types/git_url.hpp>
#include <kernelhub/types/kernel_dependency.hpp>
#include <kernelhub/types/kernel_name.hpp>
#include <kernelhub/types/version.hpp>

// metadata.json, one per build variant (builder.md §3, loader.md §3.3): written by the builder,
// read by the loader. Readers tolerate unknown keys so newer writers stay readable.
namespace kernelhub::metadata {

// The state of a git working tree: the HEAD commit and whether tracked files were modified.
// In JSON the two keys always come together ("commit", read also as the legacy "sha").
struct GitStatus {
  types::GitOid commit;
  bool dirty = false;

  friend bool operator==(const GitStatus&, const GitStatus&) = default;
};

// `provenance.kernel-builder`: the builder's version and, when it was built from git, its state
// (flattened into the same JSON object as `version`).
struct KernelBuilderProvenance {
  std::string version;
  std::optional<GitStatus> git;

  friend bool operator==(const KernelBuilderProvenance&, const KernelBuilderProvenance&) = default;
};

// `provenance.build`, kernelhub's addition (kernels 0.17 and kernels-data read past it): what
// the variant was built with besides the commit and the builder, enough to build it again and
// get the same bytes (docs/build.md, "Reproducible builds"). It names no folder of the machine,
// no user and no time but the commit's, so it is itself the same for every such build.
struct BuildProvenance {
  std::optional<std::string> origin;  // the kernel repository's "origin" remote, no credentials
  std::optional<std::int64_t> source_date_epoch;  // SOURCE_DATE_EPOCH the compilers were given
  // Tool -> version ("cmake", "cxx": "GNU 12.2.0", "cuda": "NVIDIA 13.0.88", "torch").
  std::map<std::string, std::string> toolchain;
  // "build-type", and the flags CMake and the environment gave each language ("cxx", "cuda").
  std::map<std::string, std::string> flags;

  friend bool operator==(const BuildProvenance&, const BuildProvenance&) = default;
};

struct Provenance {
  KernelBuilderProvenance kernel_builder;
  std::optional<GitStatus> kernel;  // absent when the kernel was not built from git
  std::optional<BuildProvenance> build = std::nullopt;
  // `sandboxed`: false when the build steps ran outside kernel-builder's build sandbox
  // (--no-sandbox); written only then, so true also stands for its absence (the reference
  // ignores the key, and older builds lack it).
  bool sandboxed = true;

  // Whether the builder or the kernel had uncommitted changes.
  bool is_dirty() const;

  friend bool operator==(const Provenance&, const Provenance&) = default;
};

// `backend`: the variant's backend and, for CUDA/ROCm, the GPU archs it was compiled for.
struct BackendInfo {
  types::Backend type = types::Backend::cpu;
  std::optional<std::vector<std::string>> archs;

  friend bool operator==(const BackendInfo&, const BackendInfo&) = default;
};

struct Metadata {
  types::KernelName name;
  std::string id;  // `_<python name>_<backend>_<unique>`: module name and torch.ops namespace
  std::uint64_t version = 0;  // the kernel's major version
  // `kernels-minver`: the oldest `kernels` release that may load this kernel; exactly three
  // parts, as the reference requires (the loader enforces it, kernel_module.hpp).
  std::optional<types::Version> kernels_minver;
  std::string license;
  std::optional<types::GitUrl> upstream;
  std::optional<types::GitUrl> source;
  std::vector<std::string> python_depends;  // names from python_dependencies.json, not pip specs
  std::vector<types::KernelDependency> kernel_depends;
  BackendInfo backend;
  std::optional<Digest> digest;
  std::optional<Provenance> provenance;

  // Provenance says the builder or the kernel was dirty; false without provenance.
  bool is_dirty() const;
  // Provenance says the build ran outside the build sandbox; false without provenance.
  bool is_unsandboxed() const;

  friend bool operator==(const Metadata&, const Metadata&) = default;
};

// A `kernels-minver` as written and shown: always its three parts ("1.0.0", not "1").
std::string kernels_minver_text(const types::Version& version);

// The JSON the reference writes: keys in its field order, indent 2, a trailing newline;
// `kernel-depends` always present, absent optionals omitted, commits as "commit" (never "sha").
std::string to_json(const Metadata& metadata);

// Writes `to_json(metadata)` to `path` atomically.
util::Expected<void> write_metadata_file(const std::filesystem::path& path,
                                         const Metadata& metadata);

}  // namespace kernelhub::metadata
