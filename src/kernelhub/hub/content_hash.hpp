// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
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

// A content address computed while the bytes go by, so a download is hashed as it arrives
// instead of read back from disk afterwards.
class StreamingHash {
public:
  enum class Kind { git_blob_sha1, sha256 };
  // `size` is the whole content's length: the git blob header names it before the bytes.
  StreamingHash(Kind kind, std::uint64_t size);
  ~StreamingHash();
  StreamingHash(StreamingHash&&) noexcept;
  StreamingHash& operator=(StreamingHash&&) noexcept;

  void update(std::string_view bytes);
  // Lowercase hex of everything given to update; call once, at the end.
  std::string hex();

  // The kind an ETag names: 40 hex digits are a git blob sha1, 64 a sha256, anything else
  // (a CDN's md5, say) none.
  static std::optional<Kind> kind_of_etag(std::string_view etag);

private:
  struct Context;
  std::unique_ptr<Context> m_context;
};

std::string base64_encode(std::string_view bytes);

}  // namespace kernelhub::hub
