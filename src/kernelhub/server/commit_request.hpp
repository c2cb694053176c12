// SPDX-License-Identifier: Apache-2.0
#pragma once

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
  std::string content;  // the decoded bytes of an added file
};

// The body of `POST /api/{T}/{repo}/commit/{rev}`: NDJSON whose first line is the header.
struct CommitRequest {
  std::string summary;
  std::string description;
  std::optional<std::string> parent_commit;
  std::vector<CommitOperation> operations;
};

// Parses and validates the whole body before anything is written, so a bad line anywhere
// leaves the repository untouched. `lfsFile` lines are refused: preupload answers `regular`
// for every file, so the server never holds LFS objects to point at.
HubExpected<CommitRequest> parse_commit_request(std::string_view body);

// Standard base64 (with padding, whitespace ignored); nullopt when malformed.
std::optional<std::string> decode_base64(std::string_view text);

}  // namespace kernelhub::server
