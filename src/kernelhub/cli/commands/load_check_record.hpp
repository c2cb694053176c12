// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

// What the last load check said about a built variant, kept beside it in
// build/.kernelhub/<variant>/load-check.json, so `upload` publishes only what loaded (issue 13
// item 1) and a no-op rebuild does not load an unchanged variant again. A variant that failed
// is moved out of build/ to build/.kernelhub/<variant>/failed: nothing that looks in build/
// (upload, `kernel-builder test`, kernels.get_local_kernel, LOCAL_KERNELS) takes it as good.
namespace kernelhub::cli::commands {

enum class LoadCheckOutcome { passed, failed, not_checked };

struct LoadCheckRecord {
  LoadCheckOutcome outcome = LoadCheckOutcome::not_checked;
  // The build's cache key (builder version, interpreter, metadata.json); empty when unknown.
  std::string key;
  // sha256 of the metadata.json checked: metadata.json holds the digest of every file, so a
  // record whose hash differs from today's metadata.json is about other files.
  std::string metadata_sha256;
  std::string message;  // failed: the error; not_checked: why
};

// build/.kernelhub/<variant name> for `variant` (build/<variant name>).
std::filesystem::path load_check_folder(const std::filesystem::path& variant);

// sha256 of variant/metadata.json; empty when it cannot be read.
std::string metadata_sha256(const std::filesystem::path& variant);

// The record of `variant`, when there is one and it reads.
std::optional<LoadCheckRecord> read_load_check_record(const std::filesystem::path& variant);

// The record, only when it is about the variant's current metadata.json.
std::optional<LoadCheckRecord> current_load_check_record(const std::filesystem::path& variant);

// Writes the record (a failure to write means only that the next command checks again).
void write_load_check_record(const std::filesystem::path& variant, const LoadCheckRecord& record);

// Removes the record and a variant set aside before: a new build of the variant is in build/.
void forget_load_check(const std::filesystem::path& variant);

// Moves a variant that failed its load check to build/.kernelhub/<variant>/failed (replacing
// one set aside before) and returns where it went; nullopt when it could not be moved.
std::optional<std::filesystem::path> set_aside_failed_variant(const std::filesystem::path& variant);

struct SetAsideVariant {
  std::string name;
  std::filesystem::path path;  // build/.kernelhub/<name>/failed
  std::string message;         // the load error recorded with it
};

// The variants of `build_root` (the folder holding the variants) that failed their last load
// check and were set aside.
std::vector<SetAsideVariant> set_aside_variants(const std::filesystem::path& build_root);

}  // namespace kernelhub::cli::commands
