// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <kernelhub/metadata/digest.hpp>
#include <kernelhub/util/expected.hpp>

// What the builder wrote into a kernel's build/ folder, recorded as it writes it, so that
// `kernel-builder clean` removes exactly that and never a file an author put there:
//   build/.kernelhub/CACHEDIR.TAG                the builder's own folder (the cache-directory
//                                                tag backup tools honour), made by the builder
//   build/.kernelhub/<variant>/built-files.json  every file of build/<variant>/ with its hash
//   build/<project>/CACHEDIR.TAG                 a project create-project wrote there
namespace kernelhub::builder {

// The signature line of a cache-directory tag (bford.info/cachedir).
inline constexpr std::string_view k_cachedir_signature =
    "Signature: 8a477f597d28d172789f06886806bc55";

// build/.kernelhub of `build_dir` (the folder holding the variants).
std::filesystem::path builder_folder(const std::filesystem::path& build_dir);

// Writes build/.kernelhub/CACHEDIR.TAG (once; an existing tag is kept).
util::Expected<void> mark_builder_folder(const std::filesystem::path& build_dir);

// True when build/.kernelhub carries the tag mark_builder_folder writes.
bool is_marked_builder_folder(const std::filesystem::path& build_dir);

// Tags `folder` (a project create-project generated) as kernel-builder's own, so `clean`
// removes it whole with what was built in it (pip's CMake tree, the links setup.py made).
util::Expected<void> mark_generated_folder(const std::filesystem::path& folder);

// True when `folder` carries a tag written by kernel-builder (mark_builder_folder or
// mark_generated_folder); another tool's CACHEDIR.TAG does not count.
bool is_generated_folder(const std::filesystem::path& folder);

// One assembled variant: its files' hashes (metadata.json's digest) and metadata.json itself,
// which the digest leaves out.
struct BuiltFiles {
  metadata::Digest digest;
  std::string metadata_json;
};

util::Expected<void> write_built_files(const std::filesystem::path& build_dir,
                                       const std::string& variant, const BuiltFiles& files);

// The record of `variant`, when there is one and it reads.
std::optional<BuiltFiles> read_built_files(const std::filesystem::path& build_dir,
                                           const std::string& variant);

}  // namespace kernelhub::builder
