// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

// What the loader records of a cached file to know later, without reading it, that it has not
// changed since it was checked: the blob stamps (blob_verify.hpp) and the variant seals
// (variant_seal.hpp). ctime is the one field a user cannot set back: rewriting the bytes in
// place and restoring mtime with `touch -d` or utime(2) still moves ctime to now, as does any
// chmod, rename or hard link. dev + ino tell a replaced or restored file apart.
namespace kernelhub::loader {

struct FileState {
  bool folder = false;
  long long size = 0;
  long long mtime_ns = 0;
  long long ctime_ns = 0;
  unsigned long long dev = 0;
  unsigned long long ino = 0;

  // stat(2) of `path`, links followed (what an import of it reads); nullopt when it fails.
  static std::optional<FileState> of(const std::string& path);

  friend bool operator==(const FileState&, const FileState&) = default;
};

}  // namespace kernelhub::loader
