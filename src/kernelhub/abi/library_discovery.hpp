// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <vector>

#include <kernelhub/util/expected.hpp>

namespace kernelhub::abi {

// A kernel's build variants: the subdirectories holding a metadata.json of the first of
// DIR/result (Nix's symlink), DIR/build and DIR that has any, sorted. A DIR that holds a
// metadata.json itself is taken as one variant (the reference only looks below it).
util::Expected<std::vector<std::filesystem::path>> discover_variants(
    const std::filesystem::path& dir);

// Every *.so and *.pyd file below `variant`, recursively, sorted; directory symlinks inside a
// variant are not followed.
std::vector<std::filesystem::path> find_libraries(const std::filesystem::path& variant);

// What `check-abi` checks for its arguments: each directory's variants' libraries, and each
// file as given. No arguments means the current directory.
util::Expected<std::vector<std::filesystem::path>> libraries_to_check(
    const std::vector<std::filesystem::path>& arguments);

}  // namespace kernelhub::abi
