// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/kernel_lock.hpp>

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/hub/content_hash.hpp>
#include <kernelhub/metadata/json_reader.hpp>
#include <kernelhub/types/git_oid.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::loader {

using metadata::Field;
using metadata::JsonReader;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

class LockReader {
 public:
  LockReader(std::string_view text, const std::string& file_name, util::DiagnosticSink& sink)
      : m_json(text, file_name, sink) {}

  std::optional<KernelLockFile> read() {
    if (!m_json.parsed()) {
      return std::nullopt;
    }
    const auto& root = m_json.root();
    if (!root.is_array()) {
      m_json.error("", fmt::format("expected an array of locks, found {}", root.type_name()),
                   "kernels.lock is a JSON array; run `kernelhub lock PROJECT` to write it again");
      return std::nullopt;
    }
    KernelLockFile lock;
    // The first entry decides: both formats are arrays of objects, told apart by their keys.
    if (!root.empty() && root[0].is_object() && !root[0].contains("dependency") &&
        (root[0].contains("repo_id") || root[0].contains("sha"))) {
      lock.format = LockFormat::legacy;
    }
    for (std::size_t i = 0; i < root.size(); ++i) {
      const auto path = JsonReader::index_path("", i);
      auto entry = lock.format == LockFormat::legacy ? legacy_entry(root[i], path)
                                                     : dependency_entry(root[i], path);
      if (entry) {
        lock.entries.push_back(std::move(*entry));
      }
    }
    check_duplicates(lock);
    if (m_json.has_errors()) {
      return std::nullopt;
    }
    return lock;
  }

 private:
  bool deny_unknown_keys(const std::string& path, std::initializer_list<std::string_view> known,
                         std::string_view hint) {
    bool ok = true;
    for (const auto& key : m_json.keys_at(path)) {
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        m_json.error(path, fmt::format("unknown key \"{}\"", key), std::string(hint));
        ok = false;
      }
    }
    return ok;
  }

  std::optional<std::string> string_member(const json& object, const std::string& path,
                                           std::string_view name, Field field) {
    const auto* value = m_json.member(object, path, {name}, field);
    if (value == nullptr) {
      return std::nullopt;
    }
    return m_json.string(*value, JsonReader::member_path(path, name));
  }

  std::optional<std::string> commit_member(const json& object, const std::string& path,
                                           std::string_view name) {
    auto text = string_member(object, path, name, Field::required);
    if (!text) {
      return std::nullopt;
    }
    auto oid = types::GitOid::parse(*text);
    if (!oid) {
      m_json.error(JsonReader::member_path(path, name), oid.error().message,
                   "a lock pins a full commit sha; run `kernelhub lock PROJECT` again");
      return std::nullopt;
    }
    return oid->str();
  }

  std::optional<KernelLockEntry> dependency_entry(const json& value, const std::string& path) {
    if (!m_json.expect_object(value, path)) {
      return std::nullopt;
    }
    bool ok = deny_unknown_keys(path, {"dependency", "lock"},
                                "an entry has \"dependency\" and \"lock\"");
    KernelLockEntry entry;
    const auto* dependency = m_json.member(value, path, {"dependency"}, Field::required);
    const auto dependency_path = JsonReader::member_path(path, "dependency");
    if (dependency == nullptr || !m_json.expect_object(*dependency, dependency_path)) {
      ok = false;
    } else {
      ok = deny_unknown_keys(dependency_path, {"repo-id", "version", "revision"},
                             "a dependency has \"repo-id\" and one of \"version\" or \"revision\"") &&
           ok;
      auto repo_id = string_member(*dependency, dependency_path, "repo-id", Field::required);
      if (const auto* version = m_json.member(*dependency, dependency_path, {"version"}, Field::optional)) {
        entry.version = m_json.unsigned_integer(*version, JsonReader::member_path(dependency_path, "version"));
        ok = entry.version.has_value() && ok;
      }
      if (m_json.member(*dependency, dependency_path, {"revision"}, Field::optional) != nullptr) {
        entry.revision = string_member(*dependency, dependency_path, "revision", Field::optional);
        ok = entry.revision.has_value() && ok;
      }
      if (entry.version && entry.revision) {
        m_json.error(dependency_path, "\"version\" and \"revision\" are mutually exclusive");
        ok = false;
      } else if (ok && !entry.version && !entry.revision) {
        m_json.error(dependency_path, "either \"version\" or \"revision\" must be specified");
        ok = false;
      }
      ok = repo_id.has_value() && ok;
      entry.repo_id = repo_id.value_or("");
    }
    const auto* lock = m_json.member(value, path, {"lock"}, Field::required);
    const auto lock_path = JsonReader::member_path(path, "lock");
    if (lock == nullptr || !m_json.expect_object(*lock, lock_path)) {
      ok = false;
    } else {
      ok = deny_unknown_keys(lock_path, {"commit"}, "a lock has only \"commit\"") && ok;
      auto commit = commit_member(*lock, lock_path, "commit");
      ok = commit.has_value() && ok;
      entry.commit = commit.value_or("");
    }
    return ok ? std::optional(std::move(entry)) : std::nullopt;
  }

  std::optional<KernelLockEntry> legacy_entry(const json& value, const std::string& path) {
    if (!m_json.expect_object(value, path)) {
      return std::nullopt;
    }
    // The legacy reader builds dataclasses from the keys, so unknown keys fail there too.
    bool ok = deny_unknown_keys(path, {"repo_id", "sha", "variants"},
                                "a legacy entry has \"repo_id\", \"sha\" and \"variants\"");
    KernelLockEntry entry;
    auto repo_id = string_member(value, path, "repo_id", Field::required);
    auto commit = commit_member(value, path, "sha");
    ok = repo_id.has_value() && commit.has_value() && ok;
    entry.repo_id = repo_id.value_or("");
    entry.commit = commit.value_or("");
    const auto* variants = m_json.member(value, path, {"variants"}, Field::required);
    const auto variants_path = JsonReader::member_path(path, "variants");
    if (variants == nullptr || !m_json.expect_object(*variants, variants_path)) {
      return std::nullopt;
    }
    for (const auto& [name, lock] : variants->items()) {
      const auto lock_path = JsonReader::map_key_path(variants_path, name);
      if (!m_json.expect_object(lock, lock_path)) {
        ok = false;
        continue;
      }
      ok = deny_unknown_keys(lock_path, {"hash", "hash_type"}, "a variant lock has \"hash\" and \"hash_type\"") && ok;
      auto hash = string_member(lock, lock_path, "hash", Field::required);
      auto hash_type = string_member(lock, lock_path, "hash_type", Field::optional);
      if (!hash) {
        ok = false;
        continue;
      }
      VariantLock variant{*hash, hash_type.value_or(std::string(k_git_lfs_concat))};
      if (variant.hash_type != k_git_lfs_concat) {
        m_json.error(JsonReader::member_path(lock_path, "hash_type"),
                     fmt::format("unknown hash type \"{}\"", variant.hash_type),
                     fmt::format("the only hash type is \"{}\"", k_git_lfs_concat));
        ok = false;
      } else if (!variant.hash.starts_with("sha256-") || variant.hash.size() != 7 + 64) {
        m_json.error(JsonReader::member_path(lock_path, "hash"),
                     fmt::format("invalid hash \"{}\": expected \"sha256-\" and 64 hex digits", variant.hash));
        ok = false;
      }
      entry.variants.emplace(name, std::move(variant));
    }
    return ok ? std::optional(std::move(entry)) : std::nullopt;
  }

  void check_duplicates(const KernelLockFile& lock) {
    std::set<std::tuple<std::string, std::optional<std::uint64_t>, std::optional<std::string>>> seen;
    for (std::size_t i = 0; i < lock.entries.size(); ++i) {
      const auto& entry = lock.entries[i];
      if (!seen.emplace(entry.repo_id, entry.version, entry.revision).second) {
        m_json.error(JsonReader::index_path("", i),
                     fmt::format("duplicate lock for \"{}\"", entry.repo_id),
                     "each kernel dependency is locked once");
      }
    }
  }

  JsonReader m_json;
};

// kernels_data's order of dependencies: repo id bytewise, then versions (numerically) before
// revisions (by text), as Rust derives Ord for the enum.
bool dependency_less(const KernelLockEntry& a, const KernelLockEntry& b) {
  const auto key = [](const KernelLockEntry& e) {
    return std::tuple(std::string_view(e.repo_id), e.version ? 0 : 1, e.version.value_or(0),
                      std::string_view(e.revision ? *e.revision : std::string_view()));
  };
  return key(a) < key(b);
}

bool is_bytecode(std::string_view path) {
  return path.ends_with(".pyc") || path == "__pycache__" || path.starts_with("__pycache__/") ||
         path.find("/__pycache__/") != std::string_view::npos ||
         path.ends_with("/__pycache__");
}

std::string from_hex(std::string_view hex) {
  std::string bytes;
  bytes.reserve(hex.size() / 2);
  const auto digit = [](char c) {
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
  };
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<char>(digit(hex[i]) * 16 + digit(hex[i + 1])));
  }
  return bytes;
}

}  // namespace

const KernelLockEntry* KernelLockFile::find(std::string_view repo_id) const {
  const auto found = std::find_if(entries.begin(), entries.end(),
                                  [&](const KernelLockEntry& e) { return e.repo_id == repo_id; });
  return found == entries.end() ? nullptr : &*found;
}

std::optional<KernelLockFile> read_kernel_lock(std::string_view text, const std::string& file_name,
                                               util::DiagnosticSink& sink) {
  return LockReader(text, file_name, sink).read();
}

util::Expected<KernelLockFile> read_kernel_lock_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return util::fail(fmt::format("no kernels.lock file found in: {}", path.parent_path().string()));
  }
  const auto text = KH_TRY(util::read_file(path));
  util::DiagnosticCollector sink;
  auto lock = read_kernel_lock(text, path.string(), sink);
  if (!lock) {
    std::string message;
    for (const auto& diagnostic : sink.sorted()) {
      message += message.empty() ? "" : "\n";
      message += diagnostic.location.file;
      if (diagnostic.location.line > 0) {
        message += fmt::format(":{}:{}", diagnostic.location.line, diagnostic.location.column);
      }
      message += ": " + diagnostic.message;
      if (!diagnostic.hint.empty()) {
        message += fmt::format(" (hint: {})", diagnostic.hint);
      }
    }
    return util::fail(message);
  }
  return std::move(*lock);
}

std::string render_kernel_lock(const KernelLockFile& lock) {
  auto out = ordered_json::array();
  if (lock.format == LockFormat::legacy) {
    for (const auto& entry : lock.entries) {
      auto variants = ordered_json::object();
      for (const auto& [name, variant] : entry.variants) {
        variants[name] = ordered_json{{"hash", variant.hash}, {"hash_type", variant.hash_type}};
      }
      out.push_back(ordered_json{{"repo_id", entry.repo_id}, {"sha", entry.commit}, {"variants", variants}});
    }
    // Python's json.dump escapes non-ASCII (ensure_ascii); repo ids and variants are ASCII.
    return out.dump(2, ' ', true);
  }
  auto entries = lock.entries;
  std::stable_sort(entries.begin(), entries.end(), dependency_less);
  for (const auto& entry : entries) {
    ordered_json dependency{{"repo-id", entry.repo_id}};
    if (entry.version) {
      dependency["version"] = *entry.version;
    } else {
      dependency["revision"] = entry.revision.value_or("");
    }
    out.push_back(ordered_json{{"dependency", dependency}, {"lock", {{"commit", entry.commit}}}});
  }
  return out.dump(2);
}

std::string git_lfs_concat_hash(std::vector<std::pair<std::string, std::string>> files) {
  std::sort(files.begin(), files.end());
  std::string message;
  for (const auto& [path, hash] : files) {
    message += path;
    message += from_hex(hash);
  }
  return "sha256-" + hub::sha256_hex(message);
}

std::optional<std::string> variant_hash(const cache::TreeListing& listing, std::string_view variant) {
  const auto prefix = fmt::format("build/{}/", variant);
  std::vector<std::pair<std::string, std::string>> files;
  for (auto it = listing.lower_bound(prefix); it != listing.end() && it->first.starts_with(prefix); ++it) {
    const auto relative = it->first.substr(prefix.size());
    if (!is_bytecode(relative)) {
      files.emplace_back(relative, it->second.lfs_sha256 ? *it->second.lfs_sha256 : it->second.blob_id);
    }
  }
  if (files.empty()) {
    return std::nullopt;
  }
  return git_lfs_concat_hash(std::move(files));
}

std::map<std::string, VariantLock> legacy_variant_locks(const cache::TreeListing& listing) {
  std::map<std::string, VariantLock> out;
  for (auto it = listing.lower_bound("build/torch"); it != listing.end() && it->first.starts_with("build/torch"); ++it) {
    const auto slash = it->first.find('/', 6);
    if (slash == std::string::npos) {
      continue;  // a file directly in build/, not in a variant folder
    }
    const auto variant = it->first.substr(6, slash - 6);
    if (!out.contains(variant)) {
      if (auto hash = variant_hash(listing, variant)) {
        out.emplace(variant, VariantLock{std::move(*hash)});
      }
    }
  }
  return out;
}

}  // namespace kernelhub::loader
