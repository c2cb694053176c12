// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <kernelhub/util/expected.hpp>

namespace kernelhub::util {

// Reads a whole file; the error names the path and the OS reason.
Expected<std::string> read_file(const std::filesystem::path& path);

// Writes `content` to a temporary file beside `path`, flushes it and renames it over `path`,
// so readers and crashes never see a partial file.
Expected<void> write_file_atomic(const std::filesystem::path& path, std::string_view content);

}  // namespace kernelhub::util
