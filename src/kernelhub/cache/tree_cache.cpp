// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cache/tree_cache.hpp>

#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/util/file_io.hpp>

namespace kernelhub::cache {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

std::string render_tree_cache(const TreeListing& listing) {
  ordered_json files = ordered_json::object();
  for (const auto& [path, file] : listing) {
    // Python's TreeCacheEntry.to_json order, not sorted: json.dump keeps insertion order.
    ordered_json entry = {{"size", file.size}, {"blob_id", file.blob_id}};
    if (file.lfs_sha256) {
      entry["lfs_sha256"] = *file.lfs_sha256;
      entry["lfs_size"] = file.lfs_size ? ordered_json(*file.lfs_size) : ordered_json();
    }
    if (file.xet_hash) {
      entry["xet_hash"] = *file.xet_hash;
    }
    files[path] = std::move(entry);
  }
  const ordered_json data = {{"format_version", k_tree_cache_format_version},
                             {"files", std::move(files)}};
  // json.dump's ensure_ascii default escapes every non-ASCII character.
  return data.dump(1, ' ', true);
}

std::optional<TreeListing> read_tree_cache(const fs::path& file) {
  auto text = util::read_file(file);
  if (!text) {
    return std::nullopt;
  }
  try {
    const auto data = json::parse(*text);
    if (!data.is_object() || data.value("format_version", json()) != k_tree_cache_format_version) {
      return std::nullopt;
    }
    TreeListing listing;
    for (const auto& [path, info] : data.at("files").items()) {
      TreeFile entry;
      entry.size = info.at("size").get<std::uint64_t>();
      entry.blob_id = info.at("blob_id").get<std::string>();
      if (info.contains("lfs_sha256") && !info["lfs_sha256"].is_null()) {
        entry.lfs_sha256 = info["lfs_sha256"].get<std::string>();
      }
      if (info.contains("lfs_size") && !info["lfs_size"].is_null()) {
        entry.lfs_size = info["lfs_size"].get<std::uint64_t>();
      }
      if (info.contains("xet_hash") && !info["xet_hash"].is_null()) {
        entry.xet_hash = info["xet_hash"].get<std::string>();
      }
      listing.emplace(path, std::move(entry));
    }
    return listing;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

util::Expected<void> write_tree_cache(const fs::path& file, const TreeListing& listing) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec) {
    return util::fail(fmt::format("cannot create \"{}\": {}", file.parent_path().string(), ec.message()));
  }
  return util::write_file_atomic(file, render_tree_cache(listing));
}

}  // namespace kernelhub::cache
