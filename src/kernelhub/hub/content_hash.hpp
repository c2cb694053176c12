// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <kernelhub/util/expected.hpp>

// The content addresses the Hub uses (hub-api.md §5.3): the git blob sha1 of a regular file,
// `sha1("blob <len>\0" + content)`, and the sha256 of an LFS file. Lowercase hex.
namespace kernelhub::hub {

std::string git_blob_sha1(std::string_view content);
std::string sha256_hex(std::string_view content);
// The same, streamed from a file so large files are not held in memory.
util::Expected<std::string> git_blob_sha1_of_file(const std::filesystem::path& path);
util::Expected<std::string> sha256_of_file(const std::filesystem::path& path);

std::string base64_encode(std::string_view bytes);

}  // namespace kernelhub::hub
