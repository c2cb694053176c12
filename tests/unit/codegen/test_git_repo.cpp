// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <kernelhub/codegen/git_repo.hpp>

namespace kernelhub::codegen {
namespace {

namespace fs = std::filesystem;

// `git status --porcelain` in `dir`, or "" when git is not installed.
std::string porcelain(const fs::path& dir) {
  const auto command = "git -C '" + dir.string() + "' status --porcelain 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  std::string output;
  char buffer[256];
  while (pipe && std::fgets(buffer, sizeof buffer, pipe.get()) != nullptr) {
    output += buffer;
  }
  return output;
}

TEST(GitRepo, InitializesAndStagesEverythingNotIgnored) {
  fs::create_directories("project/src");
  std::ofstream("project/.gitignore") << "/build/\n";
  std::ofstream("project/src/a.cpp") << "int a;\n";
  fs::create_directories("project/build");
  std::ofstream("project/build/out.so") << "binary";

  ASSERT_TRUE(init_repository_and_stage_all("project").has_value());
  EXPECT_TRUE(fs::is_directory("project/.git"));
  if (std::system("git --version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "git is not installed, so the index cannot be inspected";
  }
  EXPECT_EQ(porcelain("project"), "A  .gitignore\nA  src/a.cpp\n");

  // Running again (init over an existing repository) is harmless and stages new files.
  std::ofstream("project/src/b.cpp") << "int b;\n";
  ASSERT_TRUE(init_repository_and_stage_all("project").has_value());
  EXPECT_EQ(porcelain("project"), "A  .gitignore\nA  src/a.cpp\nA  src/b.cpp\n");
}

TEST(GitRepo, ReportsFailures) {
  std::ofstream("not-a-dir") << "file";
  const auto result = init_repository_and_stage_all("not-a-dir/inner");
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().message.find("cannot initialize a git repository in \"not-a-dir/inner\""),
            std::string::npos)
      << result.error().message;
}

}  // namespace
}  // namespace kernelhub::codegen
