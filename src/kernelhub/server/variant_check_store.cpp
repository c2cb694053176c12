// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/variant_check_store.hpp>

#include <algorithm>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/util/file_io.hpp>

namespace kernelhub::server {

namespace {

using nlohmann::json;

// Bumped when what a check finds changes meaning: older records are then checked again.
constexpr int k_format = 1;

bool is_tree_id(std::string_view tree) {
  return tree.size() == 40 && std::all_of(tree.begin(), tree.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

json optional_bool(const std::optional<bool>& value) {
  return value ? json(*value) : json(nullptr);
}

// A member that must be a string, a bool or null; false when it is something else.
bool read_optional_bool(const json& object, const char* key, std::optional<bool>& out) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    out.reset();
    return true;
  }
  if (!it->is_boolean()) {
    return false;
  }
  out = it->get<bool>();
  return true;
}

bool read_string(const json& object, const char* key, std::string& out) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) {
    return false;
  }
  out = it->get<std::string>();
  return true;
}

}  // namespace

std::string_view to_string(VariantCheckRecord::Origin origin) {
  return origin == VariantCheckRecord::Origin::upload ? "upload" : "page view";
}

VariantCheckStore::VariantCheckStore(const std::filesystem::path& repo_dir)
    : m_dir(repo_dir / "kernelhub" / "variant-checks") {}

std::filesystem::path VariantCheckStore::path_of(std::string_view tree) const {
  return m_dir / (std::string(tree) + ".json");
}

std::optional<VariantCheckRecord> VariantCheckStore::find(std::string_view tree) const {
  if (!is_tree_id(tree)) {
    return std::nullopt;
  }
  std::error_code error;
  if (!std::filesystem::exists(path_of(tree), error)) {
    return std::nullopt;
  }
  const auto text = util::read_file(path_of(tree));
  if (!text) {
    return std::nullopt;
  }
  const json doc = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || doc.value("format", 0) != k_format) {
    return std::nullopt;
  }
  VariantCheckRecord record;
  std::string origin;
  const auto digest = doc.find("digest");
  const auto signature = doc.find("signature");
  const auto keys = doc.find("keys");
  const auto is_signed = doc.find("signed");
  if (!read_string(doc, "tree", record.tree) || record.tree != tree ||
      !read_string(doc, "commit", record.commit) || !read_string(doc, "origin", origin) ||
      (origin != "upload" && origin != "page view") || digest == doc.end() ||
      !digest->is_object() || signature == doc.end() || !signature->is_object() ||
      keys == doc.end() || !keys->is_array() || is_signed == doc.end() ||
      !is_signed->is_boolean()) {
    return std::nullopt;
  }
  record.origin = origin == "upload" ? VariantCheckRecord::Origin::upload
                                     : VariantCheckRecord::Origin::page_view;
  for (const auto& key : *keys) {
    if (!key.is_string()) {
      return std::nullopt;
    }
    record.keys.push_back(key.get<std::string>());
  }
  VariantIntegrity& integrity = record.integrity;
  integrity.signed_ = is_signed->get<bool>();
  if (!read_optional_bool(*digest, "matches", integrity.digest_matches) ||
      !read_string(*digest, "detail", integrity.digest_detail) ||
      !read_optional_bool(*signature, "valid", integrity.signature_valid) ||
      !read_string(*signature, "detail", integrity.signature_detail)) {
    return std::nullopt;
  }
  return record;
}

util::Expected<void> VariantCheckStore::save(const VariantCheckRecord& record) const {
  if (!is_tree_id(record.tree)) {
    return util::fail(fmt::format("\"{}\" is not a git tree id", record.tree));
  }
  std::error_code error;
  std::filesystem::create_directories(m_dir, error);
  if (error) {
    return util::fail(fmt::format("cannot create \"{}\": {}", m_dir.string(), error.message()));
  }
  const VariantIntegrity& integrity = record.integrity;
  const json doc = {
      {"format", k_format},
      {"tree", record.tree},
      {"commit", record.commit},
      {"origin", to_string(record.origin)},
      {"keys", record.keys},
      {"digest", {{"matches", optional_bool(integrity.digest_matches)},
                  {"detail", integrity.digest_detail}}},
      {"signed", integrity.signed_},
      {"signature", {{"valid", optional_bool(integrity.signature_valid)},
                     {"detail", integrity.signature_detail}}},
  };
  // Details quote file names and bundle fields as they are: never fail on odd bytes.
  return util::write_file_atomic(path_of(record.tree),
                                 doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

}  // namespace kernelhub::server
