// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kernelhub::server {

// The Git LFS pointer file that stands in a repository's tree for a file whose bytes live in
// the LFS store (git-lfs docs/spec.md, "The Pointer"): the tree entry's git oid is the sha1
// of this text, and the Hub's tree entries report its length as `lfs.pointerSize`.
struct LfsPointer {
  std::string oid;  // sha256 of the content, 64 lower-case hex digits
  std::uint64_t size = 0;
};

// git-lfs never reads a pointer longer than this; a blob above it is never one.
inline constexpr std::size_t k_max_lfs_pointer_bytes = 1024;

// The canonical text: the version line, `oid sha256:<hex>`, `size <n>`, each ending in "\n".
std::string lfs_pointer_text(const LfsPointer& pointer);

// The pointer a blob holds, or nullopt when it is not exactly a canonical pointer (which is
// what the server writes and what git-lfs writes for a sha256 object without extensions).
std::optional<LfsPointer> parse_lfs_pointer(std::string_view text);

// 64 lower-case hex digits: the only oid form the store accepts (it names files after it).
bool is_sha256_hex(std::string_view text);

}  // namespace kernelhub::server
