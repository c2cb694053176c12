// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <kernelhub/builder/incremental.hpp>

namespace kernelhub::builder {
namespace {

namespace fs = std::filesystem;

std::vector<Command> commands() {
  return {Command{{"cmake", "-S", "p", "-B", "b", "-G", "Ninja"}, {}},
          Command{{"ninja", "-C", "b"}, {}}};
}

void touch(const fs::path& path) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << "x";
}

TEST(Incremental, FirstBuildConfiguresAndCapsJobs) {
  auto cmds = commands();
  const auto build = prepare_incremental(cmds, "b", types::Backend::cpu);
  ASSERT_EQ(cmds.size(), 2U);
  ASSERT_EQ(cmds.back().argv.size(), 4U);
  EXPECT_TRUE(cmds.back().argv.back().starts_with("-j"));
  EXPECT_GE(std::stoi(cmds.back().argv.back().substr(2)), 1);
  ASSERT_TRUE(build.configure_stamp.has_value());
}

TEST(Incremental, SkipsConfigureOnlyWhenTheSameCommandConfiguredTheTree) {
  auto first = commands();
  const auto build = prepare_incremental(first, "b", types::Backend::cuda);
  touch("b/build.ninja");
  touch("b/CMakeCache.txt");
  ASSERT_TRUE(finish_incremental(build, "b").has_value());

  auto again = commands();
  const auto second = prepare_incremental(again, "b", types::Backend::cuda);
  ASSERT_EQ(again.size(), 1U);
  EXPECT_EQ(again.front().argv.front(), "ninja");
  EXPECT_FALSE(second.configure_stamp.has_value());

  auto changed = commands();
  changed.front().argv.push_back("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache");
  const auto third = prepare_incremental(changed, "b", types::Backend::cuda);
  EXPECT_EQ(changed.size(), 2U);
  EXPECT_TRUE(third.configure_stamp.has_value());
  // The old stamp is gone until the new configure succeeds.
  EXPECT_FALSE(fs::exists(fs::path("b") / k_configure_stamp));

  fs::remove("b/build.ninja");
  auto lost = commands();
  prepare_incremental(lost, "b", types::Backend::cuda);
  EXPECT_EQ(lost.size(), 2U);
}

TEST(Incremental, KeepsAnExplicitJobCount) {
  auto cmds = commands();
  cmds.back().argv.push_back("-j3");
  prepare_incremental(cmds, "b", types::Backend::cpu);
  EXPECT_EQ(cmds.back().argv.back(), "-j3");
  EXPECT_EQ(cmds.back().argv.size(), 4U);
}

TEST(Incremental, ATreeConfiguredInAnotherFolderIsStartedAgain) {
  // The kernel folder was copied with its build/: CMake would refuse the cache.
  fs::create_directories("b");
  std::ofstream("b/CMakeCache.txt") << "CMAKE_CACHEFILE_DIR:INTERNAL=/elsewhere/b\nX:BOOL=ON\n";
  touch("b/build.ninja");
  touch("b/CMakeFiles/old.o");
  auto cmds = commands();
  const auto build = prepare_incremental(cmds, "b", types::Backend::cpu);
  EXPECT_EQ(cmds.size(), 2U) << "configured again";
  EXPECT_TRUE(build.configure_stamp.has_value());
  EXPECT_FALSE(fs::exists("b/CMakeCache.txt"));
  EXPECT_FALSE(fs::exists("b/CMakeFiles/old.o"));
}

TEST(Incremental, ATreeConfiguredHereKeepsItsObjects) {
  fs::create_directories("b");
  std::ofstream("b/CMakeCache.txt")
      << "CMAKE_CACHEFILE_DIR:INTERNAL=" << fs::absolute("b").string() << "\n";
  touch("b/CMakeFiles/old.o");
  auto cmds = commands();
  (void)prepare_incremental(cmds, "b", types::Backend::cpu);
  EXPECT_EQ(cmds.size(), 2U) << "no stamp: configured (in place)";
  EXPECT_TRUE(fs::exists("b/CMakeCache.txt"));
  EXPECT_TRUE(fs::exists("b/CMakeFiles/old.o"));
}

}  // namespace
}  // namespace kernelhub::builder
