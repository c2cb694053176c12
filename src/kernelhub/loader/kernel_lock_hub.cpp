// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/kernel_lock_hub.hpp>

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <toml++/toml.h>

#include <kernelhub/cache/kernel_download.hpp>
#include <kernelhub/hub/content_hash.hpp>
#include <kernelhub/loader/publisher_trust.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>
#include <kernelhub/util/file_io.hpp>
#include <kernelhub/util/toml_depth.hpp>

namespace kernelhub::loader {

namespace fs = std::filesystem;

namespace {

hub::RepoRef kernel_ref(const hub::RepoId& id) { return hub::RepoRef{id, hub::RepoType::kernel}; }

std::string located(const fs::path& file, const toml::source_region& where, std::string_view message) {
  return fmt::format("{}:{}:{}: {}", file.string(), where.begin.line, where.begin.column, message);
}

using DependencyKey = std::tuple<std::string, std::optional<std::uint64_t>, std::optional<std::string>>;

DependencyKey key_of(const types::KernelDependency& d) { return {d.repo_id, d.version, d.revision}; }

std::string describe(const types::KernelDependency& d) {
  return d.version ? fmt::format("{} (version {})", d.repo_id, *d.version)
                   : fmt::format("{} (revision {})", d.repo_id, d.revision.value_or(""));
}

// The depth-first walk of the reference's lock_kernel_tree: a kernel is locked after all the
// kernels its variants depend on.
class LockWalk {
 public:
  LockWalk(const cache::HubCache& cache, LockFormat format, const RemoteCodeTrust& trust)
      : m_cache(cache), m_format(format), m_trust(trust) {}

  util::Expected<void> lock(const types::KernelDependency& dependency) {
    const auto key = key_of(dependency);
    if (m_done.contains(key)) {
      return {};
    }
    if (std::find(m_path.begin(), m_path.end(), key) != m_path.end()) {
      return util::fail(fmt::format("cyclic kernel dependency detected: {}", dependency.repo_id));
    }
    m_path.push_back(key);
    auto entry = KH_TRY(lock_one(dependency));
    m_path.pop_back();
    m_done.insert(key);
    m_lock.entries.push_back(std::move(entry));
    return {};
  }

  KernelLockFile result() && {
    m_lock.format = m_format;
    return std::move(m_lock);
  }

 private:
  util::Expected<KernelLockEntry> lock_one(const types::KernelDependency& dependency) {
    // Before anything is fetched, as the reference's lock_kernel_tree: its publisher, unless
    // the caller consented. Offline the overview cannot be read, so the lock is refused as the
    // reference refuses it ("could not verify"), never waved through from the cache.
    if (!m_trust.covers(dependency.repo_id)) {
      if (auto trusted = check_publisher_trust(m_cache.client(), dependency.repo_id); !trusted) {
        return util::fail(std::move(trusted).error().message);
      }
    }
    auto repo = hub::RepoId::parse(dependency.repo_id);
    if (!repo) {
      return util::fail(fmt::format("cannot lock \"{}\": {}", dependency.repo_id, repo.error().message));
    }
    const auto ref = kernel_ref(*repo);
    KernelLockEntry entry{dependency.repo_id, dependency.version, dependency.revision, {}, {}};
    if (dependency.version) {
      const auto number = static_cast<unsigned>(*dependency.version);
      entry.commit = KH_TRY(cache::resolve_kernel_version(m_cache, *repo, number)).commit;
    } else {
      entry.commit = KH_TRY(m_cache.resolve_revision(ref, dependency.revision.value_or("main")));
    }
    const auto listing = KH_TRY(m_cache.listing(ref, entry.commit));
    for (const auto& variant : cache::variant_names(listing)) {
      const auto metadata_path = fmt::format("build/{}/metadata.json", variant);
      if (!listing.contains(metadata_path)) {
        continue;  // older builds have no metadata.json, so no kernel-depends either
      }
      const auto file = KH_TRY(m_cache.file_download(ref, entry.commit, metadata_path));
      auto metadata = metadata::read_metadata_file(file);
      if (!metadata) {
        return util::fail(fmt::format("cannot lock {}: {}", describe(dependency), metadata.error().message));
      }
      for (const auto& nested : metadata->kernel_depends) {
        if (auto locked = lock(nested); !locked) {
          return tl::unexpected(std::move(locked).error());
        }
      }
    }
    if (m_format == LockFormat::legacy) {
      entry.variants = legacy_variant_locks(listing);
    }
    return entry;
  }

  const cache::HubCache& m_cache;
  LockFormat m_format;
  const RemoteCodeTrust& m_trust;
  std::vector<DependencyKey> m_path;
  std::set<DependencyKey> m_done;
  KernelLockFile m_lock;
};

bool is_bytecode_file(std::string_view relative) {
  return relative.ends_with(".pyc") || relative.starts_with("__pycache__/") ||
         relative.find("/__pycache__/") != std::string_view::npos;
}

}  // namespace

util::Expected<std::vector<types::KernelDependency>> read_project_dependencies(const fs::path& project_dir) {
  const auto file = project_dir / "pyproject.toml";
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    return util::fail(fmt::format("no pyproject.toml found in: {}", project_dir.string()));
  }
  const auto text = KH_TRY(util::read_file(file));
  // Before toml++: a key of thousands of dotted parts overflows its recursion (issue 12).
  if (auto shallow = util::check_toml_depth(text, file.string()); !shallow) {
    return tl::unexpected(shallow.error());
  }
  toml::table root;
  try {
    root = toml::parse(text, file.string());
  } catch (const toml::parse_error& error) {
    return util::fail(located(file, error.source(), error.description()));
  }
  const auto* table = root["tool"]["kernels"]["dependencies"].as_table();
  if (table == nullptr) {
    return util::fail(fmt::format(
        "{}: no [tool.kernels.dependencies] table (hint: list the kernels to lock there, e.g. "
        "\"kernels-community/activation\" = 1)",
        file.string()));
  }
  // toml++ keeps keys sorted; the reference keeps the file's order, so sort by position.
  std::vector<std::pair<const toml::key*, const toml::node*>> items;
  for (const auto& [key, node] : *table) {
    items.emplace_back(&key, &node);
  }
  std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
    const auto& x = a.first->source().begin;
    const auto& y = b.first->source().begin;
    return std::tie(x.line, x.column) < std::tie(y.line, y.column);
  });
  std::vector<types::KernelDependency> out;
  std::vector<std::string> problems;
  for (const auto& [key, node] : items) {
    const auto* value = node->as_integer();
    if (value == nullptr || value->get() < 0) {
      problems.push_back(located(file, node->source(),
                                 fmt::format("the version of \"{}\" must be a non-negative integer (a major version)",
                                             key->str())));
      continue;
    }
    out.push_back(types::KernelDependency{std::string(key->str()), static_cast<std::uint64_t>(value->get()), {}});
  }
  if (!problems.empty()) {
    std::string message;
    for (const auto& problem : problems) {
      message += (message.empty() ? "" : "\n") + problem;
    }
    return util::fail(message);
  }
  return out;
}

util::Expected<KernelLockFile> lock_dependencies(const cache::HubCache& cache,
                                                 const std::vector<types::KernelDependency>& dependencies,
                                                 LockFormat format, const RemoteCodeTrust& trust) {
  if (dependencies.empty()) {
    return util::fail("no kernels found to lock");
  }
  LockWalk walk(cache, format, trust);
  for (const auto& dependency : dependencies) {
    if (auto locked = walk.lock(dependency); !locked) {
      return tl::unexpected(std::move(locked).error());
    }
  }
  return std::move(walk).result();
}

util::Expected<ProjectLock> lock_project(const cache::HubCache& cache, const fs::path& project_dir,
                                         LockFormat format, const RemoteCodeTrust& trust) {
  const auto dependencies = KH_TRY(read_project_dependencies(project_dir));
  ProjectLock result{project_dir / "kernels.lock",
                     KH_TRY(lock_dependencies(cache, dependencies, format, trust))};
  if (auto written = util::write_file_atomic(result.file, render_kernel_lock(result.lock)); !written) {
    return tl::unexpected(std::move(written).error());
  }
  return result;
}

util::Expected<VariantVerification> verify_locked_variant(const cache::HubCache& cache,
                                                          const KernelLockEntry& entry,
                                                          std::string_view variant,
                                                          const fs::path& variant_path) {
  const auto repo = KH_TRY(hub::RepoId::parse(entry.repo_id));
  const auto listing = KH_TRY(cache.listing(kernel_ref(repo), entry.commit));
  VariantVerification out{entry.repo_id, entry.commit, std::string(variant), {}, {}, {}, {}, {}};
  if (const auto locked = entry.variants.find(std::string(variant)); locked != entry.variants.end()) {
    out.expected = locked->second.hash;
    out.expected_from = "kernels.lock";
  } else {
    auto from_listing = variant_hash(listing, variant);
    if (!from_listing) {
      return util::fail(fmt::format("`{}` has no variant \"{}\" at {}", entry.repo_id, variant, entry.commit));
    }
    out.expected = std::move(*from_listing);
    out.expected_from = "the tree listing";
  }
  const auto prefix = fmt::format("build/{}/", variant);
  std::vector<std::pair<std::string, std::string>> actual;
  for (auto it = listing.lower_bound(prefix); it != listing.end() && it->first.starts_with(prefix); ++it) {
    const auto relative = it->first.substr(prefix.size());
    if (is_bytecode_file(relative)) {
      continue;
    }
    const auto file = variant_path / relative;
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) {
      out.missing_files.push_back(it->first);
      continue;
    }
    const bool lfs = it->second.lfs_sha256.has_value();
    const auto hash = KH_TRY(lfs ? hub::sha256_of_file(file) : hub::git_blob_sha1_of_file(file));
    if (hash != it->second.blob_name()) {
      out.changed_files.push_back(it->first);
    }
    actual.emplace_back(relative, hash);
  }
  out.actual = actual.empty() ? std::string("(no files)") : git_lfs_concat_hash(std::move(actual));
  return out;
}

}  // namespace kernelhub::loader
