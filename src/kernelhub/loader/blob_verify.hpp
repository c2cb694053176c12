// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/metadata/digest.hpp>
#include <kernelhub/util/expected.hpp>

// Never import a corrupted cached file. Every file of a snapshot is a link to blobs/<etag>,
// and the etag of a Hub file is its content hash (git blob sha1, or sha256 for LFS files), so
// each file can be checked against its own name without asking the server.
//
// Hashing a large kernel on every load would cost more than the load (sha256 runs at roughly
// 1 GB/s; a flash-attention build is hundreds of MB), so a verified blob gets a stamp
// (size, mtime_ns, ctime_ns, device, inode) under <cache>/.kernelhub/verified/<repo
// folder>/<etag>, and a blob whose stat still matches its stamp is not hashed again. Anything
// that rewrites or replaces the blob changes ctime (or the inode), and no user can set ctime
// back, so a rewrite with a restored mtime is caught too. What a stamp cannot see: a change
// within the same file-system clock tick (a few ms) as the blob's previous change, and bytes
// that rot on the disk without a write; `kernelhub verify` rehashes everything for those.
namespace kernelhub::loader {

// A blob name that is a content hash: a git blob sha1 or an LFS sha256, in lowercase hex.
bool is_content_hash(std::string_view name);

struct CorruptFile {
  std::string relative_path;    // inside the variant folder, "/"-separated
  std::filesystem::path link;   // snapshots/<commit>/build/<variant>/<relative_path>
  std::filesystem::path blob;   // blobs/<etag> the link points to
  std::string reason;           // "its content does not hash to <etag>", "its blob is missing"
};

struct BlobVerifyStats {
  std::size_t files = 0;
  std::size_t hashed = 0;  // not covered by a stamp
};

// Checks every file under `variant_path`. `stamp_root` is <cache>/.kernelhub/verified; empty
// turns stamps off (always hash). Files that are not links into blobs/ named by a content
// hash cannot be checked and are skipped.
util::Expected<std::vector<CorruptFile>> find_corrupt_files(const std::filesystem::path& variant_path,
                                                            const std::filesystem::path& stamp_root,
                                                            BlobVerifyStats* stats = nullptr);

// Removes the bad blob, its link and its stamp, so the next download fetches it again.
void remove_corrupt_file(const CorruptFile& file, const std::filesystem::path& stamp_root);

struct StampedHashStats {
  std::size_t files = 0;
  std::size_t hashed = 0;  // read and hashed: not answered by a stamp or the etag
};

// The hash of a file of a cached variant in `algorithm` (base64, as metadata.json's digest
// spells it), for the digest check of every load (digest_check.hpp). For a link into blobs/
// whose stamp still matches the blob (find_corrupt_files checked it against its etag under that
// stamp): a sha256 etag is the sha256 itself, and any other hash is read from the stamp, where
// the first answer is recorded. Anything else is read and hashed. The stamps live in the cache,
// so whoever can write the cache can forge them: they make the every-load check cheap, and
// require_signature, which must hold against a cache writer, rehashes everything instead.
util::Expected<std::string> stamped_file_hash(metadata::DigestAlgorithm algorithm,
                                              const std::filesystem::path& file,
                                              const std::filesystem::path& stamp_root,
                                              StampedHashStats* stats = nullptr);

}  // namespace kernelhub::loader
