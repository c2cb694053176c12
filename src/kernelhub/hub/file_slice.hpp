// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include <kernelhub/util/expected.hpp>

// A request body streamed from a byte range of a file (an LFS upload or one part of it). The
// request carries only the path and the range; whoever sends it opens a FileSliceReader per
// attempt and copies the bytes piece by piece into its own send buffer, so a 2 GB file is never
// held in memory and a retried part is read again from the disk.
namespace kernelhub::hub {

struct FileSlice {
  std::filesystem::path path;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

class FileSliceReader {
public:
  // Opens the file and seeks to the slice's start; fails when the file cannot be read or is
  // shorter than the slice's end (it changed since it was hashed).
  static util::Expected<FileSliceReader> open(const FileSlice& slice);

  FileSliceReader(FileSliceReader&& other) noexcept;
  FileSliceReader& operator=(FileSliceReader&& other) noexcept;
  FileSliceReader(const FileSliceReader&) = delete;
  FileSliceReader& operator=(const FileSliceReader&) = delete;
  ~FileSliceReader();

  // Copies at most `capacity` of the slice's next bytes into `buffer`; 0 once the slice is
  // done. A file that ends before the slice does is an error, not a short body.
  util::Expected<std::size_t> read(char* buffer, std::size_t capacity);
  // Goes back to `position` bytes after the slice's start (a transport rewinding a body).
  util::Expected<void> seek(std::uint64_t position);

  std::uint64_t remaining() const { return m_slice.length - m_position; }

private:
  FileSliceReader(FileSlice slice, std::FILE* file) : m_slice(std::move(slice)), m_file(file) {}

  FileSlice m_slice;
  std::FILE* m_file = nullptr;
  std::uint64_t m_position = 0;
};

}  // namespace kernelhub::hub
