// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <kernelhub/util/expected.hpp>

// The development id (docs/build.md "The kernel id while you develop"): a kernel folder with no
// git commit gets a random id on its first build, kept in build/.kernelhub/dev-id.json with the
// folder's absolute path. Every later build of that folder reuses it, so nothing is rebuilt for
// a new namespace; a copy or a moved folder (another path) gets an id of its own, so two
// uncommitted kernels, or two copies of one, still load side by side.
namespace kernelhub::builder {

// Where the id is kept.
std::filesystem::path dev_unique_id_file(const std::filesystem::path& kernel_dir);

// The id recorded for `kernel_dir` (absolute), or nullopt when none is recorded for this path
// (no record, an unreadable one, or one made in another folder).
std::optional<std::string> recorded_dev_unique_id(const std::filesystem::path& kernel_dir);

// The recorded id, else a new one, recorded (temp file then rename).
util::Expected<std::string> dev_unique_id_for(const std::filesystem::path& kernel_dir);

}  // namespace kernelhub::builder
