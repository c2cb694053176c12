// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <kernelhub/builder/git_state.hpp>

namespace kernelhub::builder {
namespace {

namespace fs = std::filesystem;

// Runs a git command in the test's folder and returns its first line of output.
std::string git(const std::string& args) {
  const auto command = "git -c user.name=t -c user.email=t@e " + args + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buffer[256];
  while (pipe != nullptr && fgets(buffer, sizeof buffer, pipe) != nullptr) {
    out += buffer;
  }
  if (pipe != nullptr) {
    pclose(pipe);
  }
  return out.substr(0, out.find('\n'));
}

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(GitState, OutsideGitThereIsNone) {
  fs::create_directories("plain");
  EXPECT_FALSE(read_git_state("plain").has_value());
}

TEST(GitState, NothingCommittedYetIsNone) {
  git("init -q repo");
  write("repo/build.toml", "x\n");
  git("-C repo add build.toml");
  EXPECT_FALSE(read_git_state("repo").has_value());
}

TEST(GitState, TreeCommitAndDirtiness) {
  git("init -q repo");
  write("repo/kernel/build.toml", "x\n");
  git("-C repo add .");
  git("-C repo commit -qm first");
  const auto tree = git("-C repo rev-parse HEAD^{tree}");
  const auto head = git("-C repo rev-parse HEAD");
  ASSERT_EQ(tree.size(), 40U) << "git is needed for this test";

  // From a subfolder, as a kernel inside a larger repository.
  auto state = read_git_state("repo/kernel");
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->tree_id, tree);
  EXPECT_EQ(state->status.commit.str(), head);
  EXPECT_FALSE(state->status.dirty);

  write("repo/kernel/untracked.txt", "new\n");
  EXPECT_FALSE(read_git_state("repo/kernel")->status.dirty) << "untracked files do not count";

  write("repo/kernel/build.toml", "changed\n");
  EXPECT_TRUE(read_git_state("repo/kernel")->status.dirty);
}

}  // namespace
}  // namespace kernelhub::builder
