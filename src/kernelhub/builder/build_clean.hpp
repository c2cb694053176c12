// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
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

// A distribution pip installed in editable mode (`pip install -e DIR`: its dist-info's
// direct_url.json says `"dir_info": {"editable": true}` and the folder's file:// URL).
struct EditableInstall {
  std::string name;
  std::filesystem::path directory;
};

// Whether an editable install could point into what `plan` removes: it removes a folder
// holding a setup.py or pyproject.toml (create-project's projects). Lets the caller skip
// asking Python otherwise.
bool removes_an_installable_project(const CleanPlan& plan);

// Reads the lines "<name>\t<directory>" that k_editable_installs_script prints.
std::vector<EditableInstall> parse_editable_installs(std::string_view listing);

// A Python program that prints every editable install of the interpreter it runs in, one
// "<name>\t<directory>" line each.
extern const std::string_view k_editable_installs_script;

// The editable installs whose folder the plan removes (or lies inside one it removes), with the
// removed folder: importing them fails once it is gone.
std::vector<std::pair<EditableInstall, std::filesystem::path>> editable_installs_removed(
    const CleanPlan& plan, std::span<const EditableInstall> installs);

// Removes the plan's files and folders, then the folders they leave empty inside build/ and
// build/ itself when nothing is left in it. Fails naming the first path it cannot remove.
util::Expected<void> apply_clean(const CleanPlan& plan, const std::filesystem::path& kernel_dir);

}  // namespace kernelhub::builder
