// SPDX-License-Identifier: Apache-2.0
#pragma once
// The commit a ref points at, without reading the ref on every request: `resolve` of a branch
// read `refs/heads/<name>` (a stat, an open, a read and a close, and libgit2's parse) for each
// request, a sixth of the server's time on a small file (issue 25).
//
// A ref may move at any time (a commit through the API, a push, `git` run by hand on the
// root, `git pack-refs`), so an entry is used only while the files the ref is read from are
// the ones it was read from: the loose ref file (`<repository>/refs/...`, which wins when it
// exists) and, when there is none, `packed-refs`. Each use stats them and compares device,
// inode, size and both times to what they were before the entry's read; git and libgit2
// write a ref by renaming a new file over it, so a moved ref is a new inode and new times.
//
// Racy stamps: a file's times have the file system's granularity (a kernel tick, or a second
// on some file systems), and a freed inode number may come back; a file changed twice within
// one tick could then look unchanged. As git does for its index, a stamp is trusted only once
// the file is older than `settle` (2 s by default) when it is read: any later change then
// has later times. A ref that moved more recently is read from its files on each request.
// Only direct refs are kept (a symbolic ref's target has files of its own).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

struct git_repository;

namespace kernelhub::server {

// A ref peeled to its commit (through annotated tags). `direct` is false for a symbolic ref.
struct PeeledRef {
  std::string commit;  // 40 lower-case hex digits
  bool direct = true;
};

// The commit the ref `name` (a full name, `refs/heads/main`) points at, read through libgit2
// every time; nullopt when there is no such ref or it does not lead to a commit.
std::optional<PeeledRef> peel_ref(git_repository* repo, const std::string& name);

// The state of a file that tells whether it was replaced or changed: see above.
struct FileIdentity {
  bool exists = false;
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;

  bool operator==(const FileIdentity&) const = default;
};
FileIdentity identify_file(const std::string& path);

// One thread's remembered refs (each server thread keeps its own: no lock on the hot path).
class RefCache {
 public:
  static constexpr std::chrono::seconds k_default_settle{2};
  static constexpr std::size_t k_default_capacity = 256;

  explicit RefCache(std::chrono::nanoseconds settle = k_default_settle,
                    std::size_t capacity = k_default_capacity);

  // As peel_ref, from the entry when the ref's files are unchanged since it was read.
  std::optional<std::string> peel(git_repository* repo, const std::string& name);

  // Answers given from an entry without reading the ref (for tests and benchmarks).
  std::uint64_t hits() const { return m_hits; }

 private:
  struct Entry {
    FileIdentity loose;
    FileIdentity packed;  // only compared when there is no loose file
    std::string commit;
  };

  std::chrono::nanoseconds m_settle;
  std::size_t m_capacity;
  std::unordered_map<std::string, Entry> m_entries;  // by the loose ref file's path
  std::uint64_t m_hits = 0;
};

}  // namespace kernelhub::server
