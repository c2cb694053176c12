// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>

#include <kernelhub/codegen/file_set.hpp>
#include <kernelhub/util/file_io.hpp>

#include "../test_support.hpp"

namespace kernelhub::codegen {
namespace {

namespace fs = std::filesystem;

FileSet sample_set() {
  FileSet files;
  EXPECT_TRUE(files.add("build.toml", "[general]\n").has_value());
  EXPECT_TRUE(files.add("src/kernel.cpp", "int x;\n").has_value());
  EXPECT_TRUE(files.add("run.py", "#!/usr/bin/env python3\n", Executable::yes).has_value());
  return files;
}

std::string read(const fs::path& path) { return util::read_file(path).value(); }

using kernelhub::testing::write;

TEST(FileSet, KeepsFilesSortedAndRejectsBadPaths) {
  FileSet files = sample_set();
  ASSERT_EQ(files.files().size(), 3u);
  EXPECT_EQ(files.files()[0].path, "build.toml");
  EXPECT_EQ(files.files()[2].path, "src/kernel.cpp");
  ASSERT_NE(files.find("run.py"), nullptr);
  EXPECT_EQ(files.find("run.py")->executable, Executable::yes);
  EXPECT_EQ(files.find("missing"), nullptr);

  for (const char* bad : {"", "/abs", "a/../b", "./a", "a//b", "dir/"}) {
    EXPECT_FALSE(files.add(bad, "").has_value()) << bad;
  }
  EXPECT_EQ(files.add("build.toml", "").error().message,
            "generated path \"build.toml\" is produced twice");
  EXPECT_FALSE(files.add("src", "").has_value());           // a folder of src/kernel.cpp
  EXPECT_FALSE(files.add("run.py/inner", "").has_value());  // below a file
}

TEST(FileSet, WritesFilesAndFolders) {
  const FileSet files = sample_set();
  ASSERT_TRUE(write_file_set(files, "out", Overwrite::no).has_value());
  EXPECT_EQ(read("out/build.toml"), "[general]\n");
  EXPECT_EQ(read("out/src/kernel.cpp"), "int x;\n");
  struct stat info {};
  ASSERT_EQ(::stat("out/run.py", &info), 0);
  EXPECT_NE(info.st_mode & S_IXUSR, 0u);
  ASSERT_EQ(::stat("out/build.toml", &info), 0);
  EXPECT_EQ(info.st_mode & S_IXUSR, 0u);
}

TEST(FileSet, RefusesToOverwriteAndWritesNothing) {
  write("out/src/kernel.cpp", "mine");
  const FileSet files = sample_set();
  EXPECT_EQ(existing_paths(files, "out"), std::vector<std::string>{"src/kernel.cpp"});
  const auto result = write_file_set(files, "out", Overwrite::no);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message,
            "refusing to overwrite 1 existing file in \"out\": \"src/kernel.cpp\"");
  EXPECT_EQ(read("out/src/kernel.cpp"), "mine");
  EXPECT_FALSE(fs::exists("out/build.toml"));
  EXPECT_FALSE(fs::exists("out/run.py"));
}

TEST(FileSet, ListsEveryExistingFile) {
  write("out/build.toml", "a");
  write("out/run.py", "b");
  const auto result = write_file_set(sample_set(), "out", Overwrite::no);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message,
            "refusing to overwrite 2 existing files in \"out\": \"build.toml\", \"run.py\"");
}

TEST(FileSet, OverwriteReplacesOnlyTheSetsFiles) {
  write("out/build.toml", "old");
  write("out/notes.txt", "user file");
  write("out/src/user.cpp", "user source");
  ASSERT_TRUE(write_file_set(sample_set(), "out", Overwrite::yes).has_value());
  EXPECT_EQ(read("out/build.toml"), "[general]\n");
  EXPECT_EQ(read("out/notes.txt"), "user file");
  EXPECT_EQ(read("out/src/user.cpp"), "user source");
  EXPECT_EQ(read("out/src/kernel.cpp"), "int x;\n");
}

TEST(FileSet, BlockedTargetsWriteNothingEvenWithOverwrite) {
  // A folder where a file should go, and a file where a folder should go.
  fs::create_directories("a/build.toml");
  auto result = write_file_set(sample_set(), "a", Overwrite::yes);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message, "cannot overwrite \"build.toml\": it is a directory");
  EXPECT_FALSE(fs::exists("a/run.py"));

  write("b/src", "a file");
  result = write_file_set(sample_set(), "b", Overwrite::yes);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message,
            "cannot write \"src/kernel.cpp\": \"src\" exists and is not a directory");
  EXPECT_FALSE(fs::exists("b/build.toml"));

  write("c", "a file");
  EXPECT_FALSE(write_file_set(sample_set(), "c", Overwrite::yes).has_value());
}

}  // namespace
}  // namespace kernelhub::codegen
