// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <filesystem>
#include <string_view>

namespace kernelhub::server {

// A request body spooled to disk and mapped back read-only: the router sees one string_view,
// and the pages are file-backed (the kernel may drop and re-read them) rather than heap that
// must stay resident. With commit_request's block-by-block decoding, a 100 MiB `upload_file`
// grows the server's peak RSS by about 9 MiB (tests/e2e/test_serve_large_upload.py). The file
// is unlinked when the SpoolFile is reset or dropped. Plain POSIX; the socket transport
// (http_session.cpp) fills it through Beast's file body.
class SpoolFile {
 public:
  SpoolFile() = default;
  SpoolFile(const SpoolFile&) = delete;
  SpoolFile& operator=(const SpoolFile&) = delete;
  ~SpoolFile() { reset(); }

  // A new empty file in `dir`; its path is path(). A `dir` removed under the running server
  // (by hand, by a tmp cleaner) is made again rather than failing every commit.
  bool create(const std::filesystem::path& dir);

  const std::filesystem::path& path() const { return m_path; }

  // Maps the file's bytes read-only; view() then shows them.
  bool map();

  // Drops the whole pages inside `part` (a piece of view()) from this process's memory. The
  // mapping is private, read-only and never written, so MADV_DONTNEED only unmaps them: the
  // next read of those bytes faults them back in from the file.
  void drop_pages(std::string_view part) const;

  std::string_view view() const {
    return m_data == nullptr ? std::string_view() : std::string_view(m_data, m_size);
  }

  // Unmaps and unlinks the file.
  void reset();

 private:
  std::filesystem::path m_path;
  const char* m_data = nullptr;
  std::size_t m_size = 0;
};

}  // namespace kernelhub::server
