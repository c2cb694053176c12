// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <sys/types.h>

#include <kernelhub/util/expected.hpp>

namespace kernelhub::util {

// Reads a whole regular file (after following links); the error names the path and the OS
// reason. Anything else is refused before a byte is read: a FIFO would block for ever, and
// /dev/zero or /dev/urandom never end.
Expected<std::string> read_file(const std::filesystem::path& path);

// "a FIFO (named pipe)", "a character device", ... for the mode of a file that is not a
// regular file, for messages that refuse it; "a regular file" for one that is.
std::string describe_file_type(unsigned mode);

// Writes `content` to a temporary file beside `path`, flushes it and renames it over `path`,
// so readers and crashes never see a partial file.
Expected<void> write_file_atomic(const std::filesystem::path& path, std::string_view content);

// The process's umask, read without changing it: from /proc/self/status where Linux has it
// (4.7 and later). umask(2) can only be read by setting it, and for that instant a file another
// thread creates would get the mode the temporary value allows; that dance is the fallback.
mode_t current_umask();

}  // namespace kernelhub::util
