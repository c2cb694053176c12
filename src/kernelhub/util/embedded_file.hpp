// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <span>
#include <string_view>

namespace kernelhub::util {

// A file compiled into the binary by cmake/EmbedFiles.cmake (templates, policy tables).
struct EmbeddedFile {
  std::string_view path;  // relative to the embedded folder, '/' separated
  std::string_view data;
};

// Finds `path` in `files`; returns nullptr when absent.
const EmbeddedFile* find_embedded(std::span<const EmbeddedFile> files, std::string_view path);

}  // namespace kernelhub::util
