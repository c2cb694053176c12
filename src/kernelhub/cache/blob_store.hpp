// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include <kernelhub/cache/repo_cache.hpp>
#include <kernelhub/util/expected.hpp>

// Getting one blob into blobs/<etag> safely (hub-api.md §5.3, §7.1): under the lock that
// huggingface_hub also takes, the bytes go to blobs/<etag>.incomplete, which a later run
// resumes after a crash, and only bytes whose size and content hash match the ETag are
// renamed to the final name. So the cache never holds a partial or wrong blob under its
// final name, and two processes wanting one blob transfer it once.
namespace kernelhub::cache {

// Brings the partial file up to the full blob: it may resume from the bytes already there
// (Range) or start again, and it returns once the transfer ended. The file exists (possibly
// empty) when the fetcher is called.
using BlobFetcher = std::function<util::Expected<void>(const std::filesystem::path& partial)>;

struct BlobRequest {
  std::string etag;  // the blob's name, from the HEAD (X-Linked-Etag or ETag)
  std::uint64_t size = 0;
  // Blob names that are content hashes are checked: 40 hex is a git blob sha1, 64 hex a
  // sha256. Turn off only when the caller verified the bytes already.
  bool verify_content = true;
};

enum class BlobOutcome { cached, downloaded };

// Ensures blobs/<etag> exists, calling `fetch` only when it does not; a blob another process
// finished while we waited for the lock is taken as it is. A partial file that turns out
// larger than the blob or fails verification is removed, so the next run starts clean.
util::Expected<BlobOutcome> ensure_blob(const RepoCache& repo, const BlobRequest& request,
                                        const BlobFetcher& fetch);

// Whether `file`'s bytes are the blob named `etag` (see BlobRequest::verify_content); true for
// names that are not content hashes.
util::Expected<bool> blob_matches_etag(const std::filesystem::path& file, std::string_view etag);

}  // namespace kernelhub::cache
