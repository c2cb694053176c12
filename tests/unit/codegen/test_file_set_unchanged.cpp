// SPDX-License-Identifier: Apache-2.0
// write_file_set leaves files that already hold their content alone (incremental builds).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include <kernelhub/codegen/file_set.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::codegen {
namespace {

namespace fs = std::filesystem;

TEST(FileSetUnchanged, KeepsTheMtimeOfIdenticalFilesAndRewritesChangedOnes) {
  FileSet files;
  ASSERT_TRUE(files.add("same.txt", "same\n").has_value());
  ASSERT_TRUE(files.add("changed.txt", "new\n").has_value());
  ASSERT_TRUE(files.add("run.sh", "#!/bin/sh\n", Executable::yes).has_value());
  ASSERT_TRUE(write_file_set(files, "out", Overwrite::yes).has_value());

  // Back-date everything, then change one file and drop the execute bit of another.
  const auto old_time = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (const auto* name : {"out/same.txt", "out/changed.txt", "out/run.sh"}) {
    fs::last_write_time(name, old_time);
  }
  ASSERT_TRUE(util::write_file_atomic("out/changed.txt", "old\n").has_value());
  fs::last_write_time("out/changed.txt", old_time);
  fs::permissions("out/run.sh", fs::perms::owner_exec | fs::perms::group_exec |
                                    fs::perms::others_exec,
                  fs::perm_options::remove);

  ASSERT_TRUE(write_file_set(files, "out", Overwrite::yes).has_value());
  EXPECT_EQ(fs::last_write_time("out/same.txt"), old_time);
  EXPECT_NE(fs::last_write_time("out/changed.txt"), old_time);
  EXPECT_EQ(util::read_file("out/changed.txt").value(), "new\n");
  EXPECT_NE(fs::status("out/run.sh").permissions() & fs::perms::owner_exec, fs::perms::none);
}

TEST(FileSetUnchanged, RefusalStillAppliesToIdenticalFiles) {
  FileSet files;
  ASSERT_TRUE(files.add("a.txt", "a\n").has_value());
  ASSERT_TRUE(write_file_set(files, "out", Overwrite::no).has_value());
  EXPECT_FALSE(write_file_set(files, "out", Overwrite::no).has_value());
}

}  // namespace
}  // namespace kernelhub::codegen
