// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

// Helpers of the unit tests in every layer. One definition for all test files: the tests
// compile in unity batches (tests/unit/CMakeLists.txt), where two files' helpers of the same
// name in their anonymous namespaces would clash.
namespace kernelhub::testing {

// A file of the test's temporary working folder (main.cpp gives each test one), or under it:
// `content` as the file's exact bytes, its parent folders created first.
inline void write(const std::filesystem::path& path, std::string_view content) {
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path());
  }
  std::ofstream(path, std::ios::binary) << content;
}

// `text` with its first `from` replaced by `to`; the test fails where `text` has no `from`.
inline std::string replace(std::string text, std::string_view from, std::string_view to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// `part` `times` times over.
inline std::string repeat(std::string_view part, std::size_t times) {
  std::string out;
  out.reserve(part.size() * times);
  for (std::size_t i = 0; i < times; ++i) {
    out += part;
  }
  return out;
}

}  // namespace kernelhub::testing
