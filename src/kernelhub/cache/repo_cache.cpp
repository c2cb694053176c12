// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cache/repo_cache.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <unistd.h>

#include <fmt/format.h>

#include <kernelhub/util/file_io.hpp>

namespace kernelhub::cache {

namespace fs = std::filesystem;

namespace {

util::Expected<void> make_parent(const fs::path& path) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) {
    return util::fail(fmt::format("cannot create \"{}\": {}", path.parent_path().string(), ec.message()));
  }
  return {};
}

}  // namespace

std::string repo_folder_name(const hub::RepoRef& repo) {
  return std::string(hub::repo_type_cache_part(repo.type)) + "--" + repo.id.folder_part();
}

bool is_safe_repo_path(std::string_view path) {
  if (path.empty() || path.front() == '/' || path.find('\0') != std::string_view::npos ||
      path.find('\\') != std::string_view::npos) {
    return false;
  }
  std::size_t begin = 0;
  while (begin <= path.size()) {
    const auto end = std::min(path.find('/', begin), path.size());
    const auto part = path.substr(begin, end - begin);
    if (part.empty() || part == "." || part == "..") {
      return false;
    }
    begin = end + 1;
  }
  return true;
}

bool is_safe_revision(std::string_view revision) {
  return is_safe_repo_path(revision) && !hub::is_commit_sha(revision);
}

bool is_safe_etag(std::string_view etag) {
  return !etag.empty() && etag != "." && etag != ".." &&
         etag.find_first_of(std::string_view("/\\\0", 3)) == std::string_view::npos;
}

RepoCache::RepoCache(fs::path cache_root, const hub::RepoRef& repo)
    : m_root(std::move(cache_root)),
      m_folder_name(repo_folder_name(repo)),
      m_folder(m_root / m_folder_name) {}

fs::path RepoCache::blob_path(std::string_view etag) const {
  return m_folder / "blobs" / std::string(etag);
}

fs::path RepoCache::partial_blob_path(std::string_view etag) const {
  return m_folder / "blobs" / (std::string(etag) + ".incomplete");
}

fs::path RepoCache::lock_path(std::string_view etag) const {
  return m_root / ".locks" / m_folder_name / (std::string(etag) + ".lock");
}

fs::path RepoCache::ref_path(std::string_view revision) const {
  return m_folder / "refs" / std::string(revision);
}

fs::path RepoCache::snapshot_dir(std::string_view commit) const {
  return m_folder / "snapshots" / std::string(commit);
}

fs::path RepoCache::snapshot_file(std::string_view commit, std::string_view path) const {
  return snapshot_dir(commit) / std::string(path);
}

fs::path RepoCache::tree_file(std::string_view commit) const {
  return m_folder / "trees" / (std::string(commit) + ".json");
}

fs::path RepoCache::no_exist_file(std::string_view commit, std::string_view path) const {
  return m_folder / ".no_exist" / std::string(commit) / std::string(path);
}

std::optional<std::string> RepoCache::read_ref(std::string_view revision) const {
  if (!is_safe_revision(revision)) {
    return std::nullopt;
  }
  auto text = util::read_file(ref_path(revision));
  if (!text) {
    return std::nullopt;
  }
  // kernels strips the ref and Python's reader does not; stripping accepts both writers.
  while (!text->empty() && std::isspace(static_cast<unsigned char>(text->back())) != 0) {
    text->pop_back();
  }
  if (!hub::is_commit_sha(*text)) {
    return std::nullopt;
  }
  return *text;
}

util::Expected<void> RepoCache::write_ref(std::string_view revision, std::string_view commit) const {
  if (revision == commit || hub::is_commit_sha(revision)) {
    return {};
  }
  if (!is_safe_revision(revision)) {
    return util::fail(fmt::format("refusing to cache the revision \"{}\"", revision));
  }
  const auto path = ref_path(revision);
  if (auto current = util::read_file(path); current && *current == commit) {
    return {};
  }
  if (auto done = make_parent(path); !done) {
    return tl::unexpected(done.error());
  }
  return util::write_file_atomic(path, commit);
}

std::vector<std::string> RepoCache::list_refs() const {
  std::vector<std::string> names;
  const auto refs = m_folder / "refs";
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(refs, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file(ec)) {
      // The name under refs/, by the path's own spelling: fs::relative would resolve every
      // folder above it through the file system (a readlink each, on every offline load).
      const auto name = it->path().lexically_relative(refs).generic_string();
      // Skip our own and Python's temporary files ("<name>.<8hex>.tmp", ".<name>.tmp.XXXXXX").
      if (!name.empty() && name.find(".tmp") == std::string::npos) {
        names.push_back(name);
      }
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> RepoCache::resolve_offline(std::string_view revision) const {
  if (hub::is_commit_sha(revision)) {
    return std::string(revision);
  }
  return read_ref(revision);
}

bool RepoCache::has_blob(std::string_view etag) const {
  std::error_code ec;
  return is_safe_etag(etag) && fs::is_regular_file(blob_path(etag), ec);
}

util::Expected<void> RepoCache::link_snapshot_file(std::string_view commit, std::string_view path,
                                                   std::string_view etag) const {
  if (!hub::is_commit_sha(commit) || !is_safe_repo_path(path) || !is_safe_etag(etag)) {
    return util::fail(fmt::format("refusing to cache \"{}\" at commit \"{}\"", path, commit));
  }
  const auto link = snapshot_file(commit, path);
  if (auto done = make_parent(link); !done) {
    return tl::unexpected(done.error());
  }
  // ../ once per folder between the link and the repo folder: snapshots/<commit>/ and each
  // directory of <path>.
  std::string target;
  const auto depth = 2 + static_cast<std::size_t>(std::count(path.begin(), path.end(), '/'));
  for (std::size_t i = 0; i < depth; ++i) {
    target += "../";
  }
  target += "blobs/" + std::string(etag);
  // Build the link beside its final name and rename it over, so a reader never finds the
  // name missing or half made, even while another process relinks the same file.
  static std::atomic<unsigned> counter{0};
  const auto temporary = link.parent_path() / fmt::format(".{}.{}-{}.link", link.filename().string(),
                                                          ::getpid(), counter.fetch_add(1));
  ::unlink(temporary.c_str());
  if (::symlink(target.c_str(), temporary.c_str()) != 0 ||
      ::rename(temporary.c_str(), link.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temporary.c_str());
    return util::fail(fmt::format("cannot link \"{}\": {}", link.string(), std::strerror(saved)));
  }
  return {};
}

util::Expected<void> RepoCache::mark_no_exist(std::string_view commit, std::string_view path) const {
  if (!hub::is_commit_sha(commit) || !is_safe_repo_path(path)) {
    return util::fail(fmt::format("refusing to cache \"{}\" at commit \"{}\"", path, commit));
  }
  const auto marker = no_exist_file(commit, path);
  if (auto done = make_parent(marker); !done) {
    return tl::unexpected(done.error());
  }
  std::error_code ec;
  if (!fs::exists(marker, ec)) {
    if (auto done = util::write_file_atomic(marker, ""); !done) {
      return tl::unexpected(done.error());
    }
  }
  return {};
}

void RepoCache::tag_cache_root() const {
  const auto tag = m_root / "CACHEDIR.TAG";
  std::error_code ec;
  if (fs::exists(tag, ec)) {
    return;
  }
  fs::create_directories(m_root, ec);
  // Best effort, as in Python: a read-only cache still serves reads.
  (void)util::write_file_atomic(tag, k_cachedir_tag);
}

}  // namespace kernelhub::cache
