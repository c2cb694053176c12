// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for one page of a Hub tree listing as the client reads it
// (hub::read_tree_page, a SAX reader with the listing's limits). Any input must give entries or
// an invalid_response, never a crash, an out-of-bounds access (ASan), undefined behaviour
// (UBSan) or an exception. Checked against an oracle: the same page parsed as a JSON document
// and read field by field, as the client read pages before the SAX reader (issue 20 item 5).
// A page the reader accepts must give exactly the oracle's entries, within the limits; a page
// the oracle calls the wrong shape must be refused; a refused page adds nothing. Commands:
// fuzz/README.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <kernelhub/hub/tree_page.hpp>

namespace {

using namespace kernelhub::hub;
using nlohmann::json;

std::string string_field(const json& value, const char* key) {
  const auto it = value.find(key);
  return it != value.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::uint64_t uint_field(const json& value, const char* key) {
  const auto it = value.find(key);
  return it != value.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
}

// The entries of a page read as a document; nullopt for the wrong shape.
std::optional<std::vector<TreeEntry>> oracle(std::string_view body) {
  const auto page = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (page.is_discarded() || !page.is_array()) {
    return std::nullopt;
  }
  std::vector<TreeEntry> entries;
  for (const auto& item : page) {
    if (!item.is_object() || !item.contains("path") || !item.contains("oid")) {
      return std::nullopt;
    }
    TreeEntry entry;
    entry.kind = string_field(item, "type") == "file" ? TreeEntry::Kind::file
                                                     : TreeEntry::Kind::directory;
    entry.path = string_field(item, "path");
    entry.oid = string_field(item, "oid");
    entry.size = uint_field(item, "size");
    if (const auto lfs = item.find("lfs"); lfs != item.end() && lfs->is_object()) {
      entry.lfs = LfsInfo{string_field(*lfs, "oid"), uint_field(*lfs, "size"),
                          uint_field(*lfs, "pointerSize")};
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

bool same(const TreeEntry& a, const TreeEntry& b) {
  const bool same_lfs = a.lfs.has_value() == b.lfs.has_value() &&
                        (!a.lfs || (a.lfs->sha256 == b.lfs->sha256 && a.lfs->size == b.lfs->size &&
                                    a.lfs->pointer_size == b.lfs->pointer_size));
  return a.kind == b.kind && a.path == b.path && a.oid == b.oid && a.size == b.size && same_lfs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  // Small limits, so inputs a fuzzer makes reach them.
  TreeListingLimits limits;
  limits.max_path_bytes = 16;
  limits.max_bytes = 8 * (sizeof(TreeEntry) + 64);
  limits.max_entries = 6;

  // A listing that already holds an entry from an earlier page.
  TreeEntries listing;
  if (!read_tree_page(R"([{"path": "a", "oid": "b"}])", "seed", limits, listing)) {
    std::abort();
  }
  const auto earlier = listing.entries.size();
  const auto earlier_bytes = listing.held_bytes;

  const auto read = read_tree_page(body, "page", limits, listing);
  const auto expected = oracle(body);
  if (!read) {
    if (read.error().kind != ErrorKind::invalid_response ||
        read.error().message.rfind("page: ", 0) != 0) {
      std::abort();
    }
    if (listing.entries.size() != earlier || listing.held_bytes != earlier_bytes) {
      std::abort();  // a refused page added entries
    }
    return 0;
  }
  if (!expected || listing.entries.size() != earlier + expected->size()) {
    std::abort();  // accepted what a document reading refuses, or read other entries
  }
  if (listing.entries.size() > limits.max_entries || listing.held_bytes > limits.max_bytes) {
    std::abort();
  }
  for (std::size_t i = 0; i < expected->size(); ++i) {
    const TreeEntry& got = listing.entries[earlier + i];
    if (!same(got, (*expected)[i]) || got.path.size() > limits.max_path_bytes) {
      std::abort();
    }
  }
  return 0;
}
