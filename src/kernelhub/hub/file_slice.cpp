// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/file_slice.hpp>

#include <cerrno>
#include <cstring>
#include <sys/types.h>

#include <fmt/format.h>

namespace kernelhub::hub {

namespace {

std::string read_error(const FileSlice& slice, std::string_view why) {
  return fmt::format("cannot read \"{}\": {}", slice.path.string(), why);
}

}  // namespace

util::Expected<FileSliceReader> FileSliceReader::open(const FileSlice& slice) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(slice.path, ec);
  if (ec) {
    return util::fail(read_error(slice, ec.message()));
  }
  if (slice.offset > size || slice.length > size - slice.offset) {
    return util::fail(read_error(
        slice, fmt::format("it has {} bytes, fewer than the {} to send from byte {}; did it "
                           "change during the upload?",
                           size, slice.length, slice.offset)));
  }
  std::FILE* file = std::fopen(slice.path.c_str(), "rb");
  if (file == nullptr) {
    return util::fail(read_error(slice, std::strerror(errno)));
  }
  FileSliceReader reader(slice, file);
  if (auto start = reader.seek(0); !start) {
    return tl::unexpected(start.error());
  }
  return reader;
}

FileSliceReader::FileSliceReader(FileSliceReader&& other) noexcept
    : m_slice(std::move(other.m_slice)), m_file(other.m_file), m_position(other.m_position) {
  other.m_file = nullptr;
}

FileSliceReader& FileSliceReader::operator=(FileSliceReader&& other) noexcept {
  if (this != &other) {
    if (m_file != nullptr) {
      std::fclose(m_file);
    }
    m_slice = std::move(other.m_slice);
    m_file = other.m_file;
    m_position = other.m_position;
    other.m_file = nullptr;
  }
  return *this;
}

FileSliceReader::~FileSliceReader() {
  if (m_file != nullptr) {
    std::fclose(m_file);
  }
}

util::Expected<std::size_t> FileSliceReader::read(char* buffer, std::size_t capacity) {
  const auto wanted = static_cast<std::size_t>(std::min<std::uint64_t>(capacity, remaining()));
  if (wanted == 0) {
    return std::size_t{0};
  }
  const auto got = std::fread(buffer, 1, wanted, m_file);
  if (got != wanted) {
    return util::fail(read_error(m_slice, std::ferror(m_file) != 0
                                              ? std::string_view(std::strerror(errno))
                                              : "it ended early; did it change during the upload?"));
  }
  m_position += got;
  return got;
}

util::Expected<void> FileSliceReader::seek(std::uint64_t position) {
  if (position > m_slice.length ||
      ::fseeko(m_file, static_cast<off_t>(m_slice.offset + position), SEEK_SET) != 0) {
    return util::fail(read_error(m_slice, "cannot seek in it"));
  }
  m_position = position;
  return {};
}

}  // namespace kernelhub::hub
