// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <kernelhub/loader/blob_verify.hpp>
#include <kernelhub/metadata/digest.hpp>
#include <kernelhub/util/expected.hpp>

// The digest check of every Hub load (issue 20 item 9): when a variant's metadata.json records
// a digest, its files must be the ones the digest names, signed or not, required or not. A
// variant changed on the hub after it was hashed (and signed), without a new digest, is refused
// with the file named instead of loading silently. It runs after the blob check
// (blob_verify.hpp), whose stamps make it cheap: a file whose blob is stamped is not read again
// (stamped_file_hash). A link to a folder in the variant is refused too: the digest does not
// enter it, so whatever it holds (a package that shadows a signed module, a library found
// through $ORIGIN) would be unchecked. Bytecode is left alone: the loader never imports it.
//
// Local loads (get_local_kernel, LOCAL_KERNELS) are the developer's own folders and are not
// checked; `kernelhub verify` checks them.
namespace kernelhub::loader {

struct DigestCheckStats {
  bool checked = false;  // metadata.json has a digest
  StampedHashStats hashes;
};

// Passes a variant without metadata.json, with one that does not parse or without a digest
// (nothing to check against: require_signature refuses those). Otherwise the refusal names the
// variant folder and the files, as `kernel integrity check failed` lines.
util::Expected<void> check_cached_variant_digest(const std::filesystem::path& variant_dir,
                                                 const std::filesystem::path& stamp_root,
                                                 DigestCheckStats* stats = nullptr);

// "kernel integrity check failed" and the first `limit` violations, one a line, with
// "... and N more" after them.
std::string integrity_failure_text(const std::vector<metadata::DigestViolation>& violations,
                                   std::size_t limit = 5);

}  // namespace kernelhub::loader
