// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <kernelhub/util/expected.hpp>

namespace kernelhub::abi {

// Random access to an object file's bytes. The readers ask only for the ranges they need
// (headers, the dynamic symbol and string tables), so checking a 450 MB libtorch_cpu.so reads
// a few MB of it; and since every access goes through read(), a range that lies outside the
// file is an error value, never an out-of-bounds access.
class ByteSource {
 public:
  virtual ~ByteSource() = default;

  virtual std::uint64_t size() const = 0;

  // The bytes [offset, offset + length); fails when any of them is past the end.
  util::Expected<std::string> read(std::uint64_t offset, std::uint64_t length) const;

 protected:
  // Called with a range already checked against size().
  virtual util::Expected<std::string> read_checked(std::uint64_t offset,
                                                   std::uint64_t length) const = 0;
};

// Bytes already in memory (tests, the fuzzer). Does not own them.
class MemoryByteSource final : public ByteSource {
 public:
  explicit MemoryByteSource(std::string_view bytes) : m_bytes(bytes) {}
  std::uint64_t size() const override { return m_bytes.size(); }

 private:
  util::Expected<std::string> read_checked(std::uint64_t offset,
                                           std::uint64_t length) const override;
  std::string_view m_bytes;
};

// A file read with pread(), so a file truncated while it is checked gives a read error rather
// than the SIGBUS a memory mapping would.
class FileByteSource final : public ByteSource {
 public:
  static util::Expected<FileByteSource> open(const std::filesystem::path& path);

  FileByteSource(FileByteSource&& other) noexcept;
  FileByteSource& operator=(FileByteSource&&) = delete;
  FileByteSource(const FileByteSource&) = delete;
  ~FileByteSource() override;

  std::uint64_t size() const override { return m_size; }

 private:
  FileByteSource(int fd, std::uint64_t size, std::string path)
      : m_fd(fd), m_size(size), m_path(std::move(path)) {}
  util::Expected<std::string> read_checked(std::uint64_t offset,
                                           std::uint64_t length) const override;

  int m_fd = -1;
  std::uint64_t m_size = 0;
  std::string m_path;
};

}  // namespace kernelhub::abi
