// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <kernelhub/server/hub_error.hpp>

struct git_repository;

namespace kernelhub::server {

// One commit of a history listing, for the web pages.
struct CommitLogEntry {
  std::string sha;
  std::int64_t time = 0;  // seconds since the epoch
  std::string title;
  std::string author;
};

// The commits reachable from `sha` (a full commit id), newest first by commit time, at most
// `limit` of them; `truncated` is set when more were left out.
HubExpected<std::vector<CommitLogEntry>> list_commits(git_repository* repo,
                                                      const std::string& sha, std::size_t limit,
                                                      bool* truncated = nullptr);

}  // namespace kernelhub::server
