// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/server/hub_error.hpp>

namespace kernelhub::server {

struct CommitOperation {
  // `add_lfs_file`: an `lfsFile` line, a file whose bytes went to the LFS store first; the
  // commit handler checks the object and turns it into an `add_file` of its pointer.
  enum class Kind { add_file, delete_file, delete_folder, add_lfs_file };
  Kind kind = Kind::add_file;
  std::string path;     // checked by check_repo_path; a folder without its trailing `/`
  std::string content;  // the decoded bytes of an added file, when no BlobSink took them
  std::string blob_id;  // what the BlobSink stored them as (40 hex digits), otherwise
  std::uint64_t size = 0;  // of the added file (of the LFS object; 0 when a copy omits it)
  std::string lfs_oid;     // add_lfs_file: the object's sha256
};

// The body of `POST /api/{T}/{repo}/commit/{rev}`: NDJSON whose first line is the header.
struct CommitRequest {
  std::string summary;
  std::string description;
  std::optional<std::string> parent_commit;
  std::vector<CommitOperation> operations;
};

// Stores one added file's decoded bytes (a git blob) and returns its id. With a sink, each
// file is stored as soon as its line is read and dropped, so a commit of many large files
// never holds more than one of them in memory.
using BlobSink = std::function<HubExpected<std::string>(std::string_view bytes)>;

// Where one large added file's decoded bytes go, piece by piece: a git blob written as a
// stream. Dropped before finish(), it stores nothing.
class BlobStream {
 public:
  virtual ~BlobStream() = default;
  virtual HubExpected<void> write(std::string_view bytes) = 0;
  // The stored blob's id (40 hex digits); the stream is done after it.
  virtual HubExpected<std::string> finish() = 0;
};

// What the server gives the parser besides the body. A file whose base64 is longer than
// k_stream_content_chars goes to `open_stream` (given its decoded size) a block at a time, so
// its decoded bytes are never whole in memory; `release` is told of each part of the body the
// parser has passed over for good (HttpRequest::release_body), so a spooled body's pages do
// not stay resident either. Both may be empty.
struct CommitSinks {
  BlobSink blob;
  std::function<HubExpected<std::unique_ptr<BlobStream>>(std::uint64_t size)> open_stream;
  std::function<void(std::string_view)> release;
  // Asked of each inline file before its bytes are stored, with its size and first bytes
  // (k_upload_sample_bytes): false skips storing it (the caller remembers why, and refuses the
  // commit once every line is read, so the answer names every such file). May be empty.
  std::function<bool(const std::string& path, std::uint64_t size, std::string_view sample)>
      admit;
};
inline constexpr std::size_t k_stream_content_chars = std::size_t{8} << 20;

HubExpected<CommitRequest> parse_commit_request(std::string_view body, const CommitSinks& sinks);

// Parses and validates the whole body before any ref moves, so a bad line anywhere leaves
// the branches untouched (a sink may have stored the blobs of the lines before it: they stay
// unreferenced, as after any failed git operation). `lfsFile` lines are parsed here and
// checked against the LFS store by the commit handler.
HubExpected<CommitRequest> parse_commit_request(std::string_view body,
                                                const BlobSink& sink = nullptr);

// Standard base64 (RFC 4648 §4) decoded strictly: padded, no whitespace or other character
// outside the alphabet, pad bits zero; nullopt when malformed.
std::optional<std::string> decode_base64(std::string_view text);

}  // namespace kernelhub::server
