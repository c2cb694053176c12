// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <kernelhub/util/expected.hpp>

// `kernel-builder clean`: removes what the builder wrote into a kernel's build/ folder, proven
// by the records it keeps (build_manifest.hpp), and nothing else: a file an author added or
// changed, a variant another tool built and anything outside build/ stay.
namespace kernelhub::builder {

struct KeptPath {
  std::filesystem::path path;
  std::string reason;  // lowercase, e.g. "changed since kernel-builder built it"
};

struct CleanPlan {
  // Variant files whose bytes are the ones the build wrote, then metadata.json; folders the
  // builder owns whole (build/.kernelhub and create-project's projects, tagged). Absolute
  // paths, sorted.
  std::vector<std::filesystem::path> files;
  std::vector<std::filesystem::path> folders;
  std::vector<KeptPath> kept;
};

// What cleaning `kernel_dir` removes and keeps; reads, never writes. Inside a recorded
// variant, Python's __pycache__ of its files goes too: imports made it, not the author.
CleanPlan plan_clean(const std::filesystem::path& kernel_dir);

// Removes the plan's files and folders, then the folders they leave empty inside build/ and
// build/ itself when nothing is left in it. Fails naming the first path it cannot remove.
util::Expected<void> apply_clean(const CleanPlan& plan, const std::filesystem::path& kernel_dir);

}  // namespace kernelhub::builder
