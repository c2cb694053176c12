// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/server/variant_integrity.hpp>
#include <kernelhub/util/expected.hpp>

// The hub's own checks of build variants, kept per repository so that a page shows what was
// verified when the variant was uploaded, and a restart keeps it: one JSON file per variant
// folder's git tree id, `<repo>.git/kernelhub/variant-checks/<tree>.json`. A tree id names the
// folder's whole content (an LFS file by its object's sha256 in the pointer), so a record stays
// true for every commit that holds the same folder, and a commit that changes a file of it
// makes a new tree that has no record yet.
namespace kernelhub::server {

struct VariantCheckRecord {
  // When the check ran: after the commit that brought the tree was accepted, or (for trees
  // committed before the server recorded checks) when a page first showed it.
  enum class Origin { upload, page_view };

  std::string tree;    // 40 hex digits
  std::string commit;  // the commit it was checked at
  Origin origin = Origin::upload;
  std::vector<std::string> keys;  // key_hints of the hub's keys the signature was checked with
  VariantIntegrity integrity;

  friend bool operator==(const VariantCheckRecord&, const VariantCheckRecord&) = default;
};

std::string_view to_string(VariantCheckRecord::Origin origin);

class VariantCheckStore {
 public:
  // `repo_dir` is the repository's folder (`<name>.git`).
  explicit VariantCheckStore(const std::filesystem::path& repo_dir);

  // The record of `tree`; nullopt when there is none, or it cannot be read, or it was written
  // in another format (then the variant is checked again and the record replaced).
  std::optional<VariantCheckRecord> find(std::string_view tree) const;

  // Writes the record atomically (a temporary file renamed over the old one), so a reader or
  // a crash never sees part of one.
  util::Expected<void> save(const VariantCheckRecord& record) const;

  std::filesystem::path path_of(std::string_view tree) const;

 private:
  std::filesystem::path m_dir;
};

}  // namespace kernelhub::server
