// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/repository_ref_cache.hpp>

#include <ctime>

#include <sys/stat.h>

#include <kernelhub/server/git_handles.hpp>

namespace kernelhub::server {

namespace {

std::int64_t timespec_ns(const timespec& time) {
  return static_cast<std::int64_t>(time.tv_sec) * 1'000'000'000 + time.tv_nsec;
}

std::int64_t realtime_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return timespec_ns(now);
}

// Whether a later change of the file is sure to give it other times (see the header).
bool stamp_settled(const FileIdentity& file, std::int64_t before_ns) {
  return !file.exists || (file.mtime_ns < before_ns && file.ctime_ns < before_ns);
}

}  // namespace

std::optional<PeeledRef> peel_ref(git_repository* repo, const std::string& name) {
  git_reference* raw = nullptr;
  if (git_reference_lookup(&raw, repo, name.c_str()) != 0) {
    return std::nullopt;
  }
  const git::Reference ref(raw);
  git_object* raw_object = nullptr;
  if (git_reference_peel(&raw_object, ref.get(), GIT_OBJECT_COMMIT) != 0) {
    return std::nullopt;
  }
  const git::Object object(raw_object);
  return PeeledRef{git::to_hex(*git_object_id(object.get())),
                   git_reference_type(ref.get()) == GIT_REFERENCE_DIRECT};
}

FileIdentity identify_file(const std::string& path) {
  struct stat info{};
  if (::stat(path.c_str(), &info) != 0) {
    return {};
  }
  return FileIdentity{true,
                      static_cast<std::uint64_t>(info.st_dev),
                      static_cast<std::uint64_t>(info.st_ino),
                      static_cast<std::int64_t>(info.st_size),
                      timespec_ns(info.st_mtim),
                      timespec_ns(info.st_ctim)};
}

RefCache::RefCache(std::chrono::nanoseconds settle, std::size_t capacity)
    : m_settle(settle), m_capacity(capacity) {}

std::optional<std::string> RefCache::peel(git_repository* repo, const std::string& name) {
  // Refs live in the common folder (the repository's own, for the bare ones served here).
  const std::string folder = git_repository_commondir(repo);
  std::string loose_path = folder + name;
  // Stamped before the ref is read: a change after this read is a change of the stamp.
  const FileIdentity loose = identify_file(loose_path);
  const FileIdentity packed = loose.exists ? FileIdentity{} : identify_file(folder + "packed-refs");
  const auto it = m_entries.find(loose_path);
  if (it != m_entries.end() && it->second.loose == loose && it->second.packed == packed) {
    ++m_hits;
    return it->second.commit;
  }
  auto peeled = peel_ref(repo, name);
  const std::int64_t before = realtime_ns() - m_settle.count();
  if (!peeled || !peeled->direct || !stamp_settled(loose, before) ||
      !stamp_settled(packed, before)) {
    if (it != m_entries.end()) {
      m_entries.erase(it);
    }
    return peeled ? std::optional<std::string>(std::move(peeled->commit)) : std::nullopt;
  }
  if (it != m_entries.end()) {
    it->second = Entry{loose, packed, peeled->commit};
  } else {
    if (m_entries.size() >= m_capacity) {
      m_entries.clear();  // refs in use come back at their next request
    }
    m_entries.emplace(std::move(loose_path), Entry{loose, packed, peeled->commit});
  }
  return std::move(peeled->commit);
}

}  // namespace kernelhub::server
