// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include <kernelhub/hub/hub_client.hpp>

// One page of `GET /api/{T}/{repo}/tree/...` (hub-api.md §2.3) read straight into TreeEntry
// values, with the limits of a whole listing applied while the page is parsed, so a hostile
// server's page is refused at its first oversized path instead of after it has been held as a
// JSON document (issue 20 item 5: 1,000 entries of 30,000-character paths a page grew a
// download by 33 MB a page).
namespace kernelhub::hub {

struct TreeListingLimits {
  // Linux's PATH_MAX: a longer path fits in no cache folder (huggingface_hub's snapshot link or
  // ours), so no real repository has one; kernel repositories' are under 100 bytes.
  std::size_t max_path_bytes = 4096;
  // What the listing's entries may hold in memory, counted as sizeof(TreeEntry) plus their
  // strings' capacities: 330,000 entries of 60-byte paths, where a kernel repository has a few thousand
  // files and the Hub advises under 100,000 files for any repository.
  std::size_t max_bytes = std::size_t{64} << 20;
  std::size_t max_entries = 1000000;
};

// What a listing has read so far, across its pages.
struct TreeEntries {
  std::vector<TreeEntry> entries;
  std::size_t held_bytes = 0;
};

// Appends the entries of `body`, a JSON array of tree entries, to `listing`. Fails
// (invalid_response, prefixed with `what`) on a body that is not JSON or not an array, an entry
// that is not an object with `path` and `oid`, a path over the limit (naming its length and the
// limit), or a listing past its byte or entry budget; the failing page's remaining entries are
// never kept. Fields are read as the Hub's client reads them: `type` "file" or a directory,
// `size` when an unsigned integer, `lfs` when an object; others are skipped unread.
HubResult<void> read_tree_page(std::string_view body, std::string_view what,
                               const TreeListingLimits& limits, TreeEntries& listing);

}  // namespace kernelhub::hub
