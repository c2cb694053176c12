// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <kernelhub/builder/git_state.hpp>

#include "../test_support.hpp"

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

using kernelhub::testing::write;

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

TEST(GitState, CommitTimeAndOriginWithoutCredentials) {
  git("init -q repo");
  write("repo/build.toml", "x\n");
  git("-C repo add .");
  ::setenv("GIT_COMMITTER_DATE", "2026-03-01T12:00:00Z", 1);
  git("-C repo commit -qm first");
  ::unsetenv("GIT_COMMITTER_DATE");
  auto state = read_git_state("repo");
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->commit_time, 1772366400);
  EXPECT_FALSE(state->origin.has_value());

  git("-C repo remote add origin https://user:token@hub.example/k/relu.git");
  EXPECT_EQ(read_git_state("repo")->origin, "https://hub.example/k/relu.git");
}

TEST(GitState, CloneAtCommitChecksOutThatCommitWithTheGivenOrigin) {
  git("init -q repo");
  write("repo/kernel/build.toml", "first\n");
  git("-C repo add .");
  git("-C repo commit -qm first");
  const auto first = git("-C repo rev-parse HEAD");
  write("repo/kernel/build.toml", "second\n");
  git("-C repo commit -qam second");
  ASSERT_EQ(first.size(), 40U) << "git is needed for this test";
  EXPECT_EQ(git("-C repo rev-parse --show-toplevel"),
            git_work_tree("repo/kernel")->lexically_normal().parent_path().string());

  const auto cloned = clone_at_commit(fs::absolute("repo").string(), first, "clone",
                                      std::string("https://hub.example/k/relu.git"));
  ASSERT_TRUE(cloned.has_value()) << cloned.error().message;
  std::ifstream in("clone/kernel/build.toml");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "first");
  const auto state = read_git_state("clone/kernel");
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->status.commit.str(), first);
  EXPECT_FALSE(state->status.dirty);
  EXPECT_EQ(state->origin, "https://hub.example/k/relu.git");

  const auto missing = clone_at_commit(fs::absolute("repo").string(), std::string(40, 'a'),
                                       "clone2", std::nullopt);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("is not in"), std::string::npos)
      << missing.error().message;
  const auto nowhere = clone_at_commit(fs::absolute("no-such-repo").string(), first, "clone3",
                                       std::nullopt);
  ASSERT_FALSE(nowhere.has_value());
  EXPECT_NE(nowhere.error().message.find("cannot clone"), std::string::npos);
}

TEST(GitState, UrlWithoutCredentials) {
  EXPECT_EQ(url_without_credentials("https://u:p@host/a@b"), "https://host/a@b");
  EXPECT_EQ(url_without_credentials("ssh://git@host:22/x.git"), "ssh://host:22/x.git");
  EXPECT_EQ(url_without_credentials("https://host/x"), "https://host/x");
  EXPECT_EQ(url_without_credentials("git@host:org/x.git"), "git@host:org/x.git");
  EXPECT_EQ(url_without_credentials("/srv/git/x"), "/srv/git/x");
}

}  // namespace
}  // namespace kernelhub::builder
