// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <vector>

// The variants a build left in a kernel's build/ folder. A variant folder is one that holds a
// metadata.json; hidden folders (the builder's set-aside failures and temporary folders) and
// half-built folders are not variants. `kernel-builder test`, the card and the checks of a
// build/ folder all list variants this one way.
namespace kernelhub::metadata {

// The variant folder names under <kernel_dir>/build, sorted; empty when there is no build/.
std::vector<std::string> built_variant_names(const std::filesystem::path& kernel_dir);

}  // namespace kernelhub::metadata
