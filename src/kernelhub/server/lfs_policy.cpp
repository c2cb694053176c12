// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/lfs_policy.hpp>

#include <fmt/format.h>

namespace kernelhub::server {

bool looks_binary(std::string_view sample) {
  return sample.substr(0, k_upload_sample_bytes).find('\0') != std::string_view::npos;
}

UploadVerdict decide_upload_mode(const StorageSettings& storage, std::uint64_t size,
                                 std::string_view sample, bool tracked_by_gitattributes) {
  // huggingface_hub sends empty files inline whatever the server says; so does every hub.
  if (!storage.lfs_threshold || size == 0) {
    return {};
  }
  if (tracked_by_gitattributes) {
    return {true, "tracked by Git LFS in .gitattributes"};
  }
  if (size > *storage.lfs_threshold) {
    return {true, fmt::format("larger than {} bytes", *storage.lfs_threshold)};
  }
  if (size > storage.binary_lfs_threshold && looks_binary(sample)) {
    return {true, "binary"};
  }
  return {};
}

}  // namespace kernelhub::server
