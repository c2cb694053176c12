// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <kernelhub/server/hub_error.hpp>

struct git_repository;

namespace kernelhub::server {

// A blob's bytes inflated from its loose object file, or from its entry in a pack, a block at
// a time with plain reads (no mapping): a 100 MB file is sent holding a few hundred KiB, where
// libgit2 would inflate it whole (and map the compressed file too). A blob stored in a pack as
// a delta is not read this way.
class BlobReader {
 public:
  virtual ~BlobReader() = default;
  virtual std::uint64_t size() const = 0;
  // Up to `capacity` bytes into `out`; 0 once all `size()` bytes were read. A damaged object
  // (a zlib error, or a length other than its header's) is an error.
  virtual HubExpected<std::size_t> read(char* out, std::size_t capacity) = 0;
};

// The reader for blob `oid` when it is stored loose or whole in a pack; null when it is a
// delta or not found (the caller reads it whole through libgit2).
HubExpected<std::shared_ptr<BlobReader>> open_streamed_blob(git_repository* repo,
                                                            const std::string& oid);

}  // namespace kernelhub::server
