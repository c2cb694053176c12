// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <kernelhub/server/hub_error.hpp>
#include <kernelhub/server/lfs_pointer.hpp>

namespace kernelhub::server {

// One repository's Git LFS objects, outside git: `<repo>.git/lfs/objects/<o[0:2]>/<o[2:4]>/<oid>`,
// the layout git-lfs keeps in a clone, named by the content's sha256. Objects belong to one
// repository (a commit can point only at bytes uploaded to its own repository, so knowing a
// private file's sha256 never opens it elsewhere).
//
// Nothing reaches `objects/` unchecked: an upload is first a file of its own (the request body
// the transport spooled), hashed in blocks, and only when its sha256 and size are the ones
// announced is it linked into `lfs/tmp/` and renamed into place. A reader sees a whole object
// or none; a killed upload leaves a temporary file and never a wrong object.
class LfsObjectStore {
 public:
  explicit LfsObjectStore(std::filesystem::path repo_dir);

  std::filesystem::path object_path(const std::string& oid) const;
  // The stored object's size, or nullopt when it is not stored.
  std::optional<std::uint64_t> stored_size(const std::string& oid) const;

  // Checks `source` against `expected` (409-free: a mismatch is a 400 naming both hashes or
  // sizes) and stores it. `source` is left where it is (it is linked, or copied across file
  // systems). An object already stored is kept as it is.
  HubExpected<void> install(const std::filesystem::path& source, const LfsPointer& expected);

  // Multipart uploads: part `number` (from 1) of the upload of `oid`, stored as it came. Its
  // size must be `expected_size`. Returns the part's ETag, which the completion must repeat.
  HubExpected<std::string> store_part(const std::filesystem::path& source, const std::string& oid,
                                      std::uint64_t number, std::uint64_t expected_size);

  struct Part {
    std::uint64_t number = 0;
    std::string etag;
  };
  // Joins parts 1..N (N = ceil(size / chunk_size), each named with the ETag its upload got)
  // into the object, checked as `install` checks, and removes the parts.
  HubExpected<void> complete(const LfsPointer& expected, std::uint64_t chunk_size,
                             const std::vector<Part>& parts);

  // Removes parts and temporary files older than `age` (uploads nobody will finish).
  void remove_stale(std::chrono::seconds age) const;

 private:
  std::filesystem::path part_path(const std::string& oid, std::uint64_t number) const;
  // A new empty file in lfs/tmp.
  HubExpected<std::filesystem::path> temporary_file() const;
  HubExpected<void> move_into_place(const std::filesystem::path& temporary,
                                    const std::string& oid) const;

  std::filesystem::path m_lfs_dir;
};

// The ETag given to a stored part: derived from the file's identity and stamp, so a part
// uploaded again gets a new one.
std::string part_etag(const std::filesystem::path& part);

// The sha256 (lower-case hex) and size of a file, read in blocks with bounded memory.
struct FileDigest {
  std::string sha256;
  std::uint64_t size = 0;
};
HubExpected<FileDigest> sha256_of_file(const std::filesystem::path& path);

}  // namespace kernelhub::server
