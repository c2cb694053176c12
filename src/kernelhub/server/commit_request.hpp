// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/server/hub_error.hpp>

namespace kernelhub::server {

struct CommitOperation {
  enum class Kind { add_file, delete_file, delete_folder };
  Kind kind = Kind::add_file;
  std::string path;     // checked by check_repo_path; a folder without its trailing `/`
  std::string content;  // the decoded bytes of an added file, when no BlobSink took them
  std::string blob_id;  // what the BlobSink stored them as (40 hex digits), otherwise
  std::uint64_t size = 0;  // of the added file
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

// Parses and validates the whole body before any ref moves, so a bad line anywhere leaves
// the branches untouched (a sink may have stored the blobs of the lines before it: they stay
// unreferenced, as after any failed git operation). `lfsFile` lines are refused: preupload
// answers `regular` for every file, so the server never holds LFS objects to point at.
HubExpected<CommitRequest> parse_commit_request(std::string_view body,
                                                const BlobSink& sink = nullptr);

// Standard base64 (RFC 4648 §4) decoded strictly: padded, no whitespace or other character
// outside the alphabet, pad bits zero; nullopt when malformed.
std::optional<std::string> decode_base64(std::string_view text);

}  // namespace kernelhub::server
