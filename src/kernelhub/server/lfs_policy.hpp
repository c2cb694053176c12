// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <kernelhub/server/server_settings.hpp>

namespace kernelhub::server {

// How a file must reach the repository: inline in a commit (`regular`) or through Git LFS,
// decided as huggingface.co's preupload decides, from the size, the first bytes (huggingface_hub
// sends the first 512 as `sample`) and the repository's `.gitattributes`.
struct UploadVerdict {
  bool lfs = false;
  std::string reason;  // why LFS, for the error a regular commit of it gets ("binary", ...)
};

// The bytes of a file's start that the decision reads: what preupload's sample holds, so the
// commit check and preupload always agree.
inline constexpr std::size_t k_upload_sample_bytes = 512;

UploadVerdict decide_upload_mode(const StorageSettings& storage, std::uint64_t size,
                                 std::string_view sample, bool tracked_by_gitattributes);

// git's own test for binary content (xdiff's buffer_is_binary): a NUL byte in the first bytes.
bool looks_binary(std::string_view sample);

}  // namespace kernelhub::server
