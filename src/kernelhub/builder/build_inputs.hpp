// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <kernelhub/config/build_config.hpp>
#include <kernelhub/util/expected.hpp>

// What a variant was built from, so `upload` can refuse a build/ that no longer matches the
// kernel (issue 22 §3): build/.kernelhub/<variant>/build-inputs.json holds build.toml's
// version, the unique part of the kernel id and a digest of the inputs, written by each build
// of the variant.
namespace kernelhub::builder {

struct BuildInputs {
  std::uint64_t version = 0;
  std::string unique_id;
  bool unique_id_given = false;  // --unique-id: not derived from the folder, so not compared
  std::string digest;            // inputs_digest
};

// SHA-256 (base64) over build.toml and every file the build reads from the kernel folder:
// the [torch]/[tvm-ffi] and [kernel.*] sources and include folders, and the Python package
// torch-ext/<python name>/ (without bytecode), each with its relative path. A listed file that
// is missing counts as missing, not as an error.
util::Expected<std::string> inputs_digest(const std::filesystem::path& kernel_dir,
                                          const config::BuildConfig& config);

util::Expected<void> write_build_inputs(const std::filesystem::path& build_dir,
                                        const std::string& variant, const BuildInputs& inputs);

// The record of `variant`, when there is one and it reads.
std::optional<BuildInputs> read_build_inputs(const std::filesystem::path& build_dir,
                                             const std::string& variant);

// The unique id a build of `kernel_dir` would get now without --unique-id: HEAD's tree (with
// "_dirty"), else the folder's recorded development id; nullopt when no id is recorded for
// this folder (it was copied or moved, or never built).
std::optional<std::string> current_unique_id(const std::filesystem::path& kernel_dir);

// Why build/<variant> does not come from the kernel as it is now, one sentence per
// difference (empty: it does). `built_version` is the version in the variant's metadata.json.
// Without a record (a build by an older kernel-builder or another tool) only the version is
// compared.
std::vector<std::string> stale_reasons(const std::filesystem::path& kernel_dir,
                                       const config::BuildConfig& config,
                                       const std::string& variant,
                                       std::optional<std::uint64_t> built_version);

}  // namespace kernelhub::builder
