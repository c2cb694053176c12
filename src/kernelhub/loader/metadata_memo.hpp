// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <kernelhub/metadata/metadata.hpp>

// metadata.json of a cached variant, parsed once a process. A cached metadata.json is a link to
// blobs/<content hash>, which the blob check (blob_verify.hpp) matches against its name before
// anything reads it: one name, one content. A Hub load reads it for the digest check and again
// to name the module (kernel_module.hpp); the second read is the first one's parse. Only
// parses that succeed are kept (a failure's message names the path it came from), and a file
// that is not such a link (a local build) is always read.
namespace kernelhub::loader {

// The blob name `metadata_file` links to when that names its content; nullopt otherwise.
std::optional<std::string> content_key(const std::filesystem::path& metadata_file);

std::optional<metadata::Metadata> remembered_metadata(const std::string& key);
void remember_metadata(const std::string& key, const metadata::Metadata& parsed);

}  // namespace kernelhub::loader
