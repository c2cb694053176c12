// SPDX-License-Identifier: Apache-2.0
// A mirror's fetch over libgit2 from a repository made with the git command line (file://
// URLs: the same fetch as over smart HTTP, without a server).
#include <kernelhub/server/repository_fetch.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace kernelhub::server {

namespace {

namespace fs = std::filesystem;

// Runs a shell command; its stdout.
std::string sh(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) {
    return out;
  }
  char buffer[4096];
  while (std::fgets(buffer, sizeof(buffer), pipe) != nullptr) {
    out += buffer;
  }
  ::pclose(pipe);
  return out;
}

const std::string k_git = "git -c user.name=t -c user.email=t@t -c init.defaultBranch=main";

std::string git_in(const fs::path& work) {
  return k_git + " -C " + work.string();
}

// An upstream with two commits on main, a branch v1 at the first, an annotated tag and a PR
// ref; `work` is its working copy, `upstream.git` its bare mirror.
fs::path make_upstream() {
  const fs::path work = fs::current_path() / "work";
  sh(k_git + " init -q " + work.string());
  sh(git_in(work) + " commit -q --allow-empty -m one");
  sh(git_in(work) + " branch v1");
  sh(git_in(work) + " commit -q --allow-empty -m two");
  sh(git_in(work) + " tag -a -m release t1");
  sh(git_in(work) + " update-ref refs/pr/1 HEAD~1");
  const fs::path bare = fs::current_path() / "upstream.git";
  sh(k_git + " clone -q --mirror " + work.string() + " " + bare.string());
  return bare;
}

std::string refs_of(const fs::path& git_dir) {
  return sh("git --git-dir " + git_dir.string() +
            " for-each-ref --format='%(refname) %(objectname)' refs/heads refs/tags refs/pr");
}

}  // namespace

TEST(RepositoryFetch, BringsEveryBranchTagAndPullRequestWithTheUpstreamsIds) {
  const fs::path upstream = make_upstream();
  ASSERT_FALSE(refs_of(upstream).empty()) << "git could not make the upstream";
  const fs::path mirror = fs::current_path() / "mirror.git";
  ASSERT_TRUE(init_mirror_repository(mirror, "http://upstream.example", false));
  EXPECT_EQ(mirrored_upstream(mirror), "http://upstream.example");
  const auto fetched = fetch_into(mirror, {"file://" + upstream.string(), ""});
  ASSERT_TRUE(fetched) << fetched.error().message;
  EXPECT_EQ(fetched->changed, 4u);  // main, v1, t1, pr/1
  EXPECT_EQ(refs_of(mirror), refs_of(upstream));
  EXPECT_EQ(sh("git --git-dir " + mirror.string() + " symbolic-ref HEAD"), "refs/heads/main\n");
  // Nothing new: nothing moves.
  const auto again = fetch_into(mirror, {"file://" + upstream.string(), ""});
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->changed, 0u);
}

TEST(RepositoryFetch, FollowsMovedAndDroppedRefsAndLeavesOthersAlone) {
  const fs::path upstream = make_upstream();
  const fs::path mirror = fs::current_path() / "mirror.git";
  ASSERT_TRUE(init_mirror_repository(mirror, "http://upstream.example", true));
  ASSERT_TRUE(fetch_into(mirror, {"file://" + upstream.string(), ""}));
  // A ref of the mirror's own (outside heads, tags and pr) is not the upstream's business.
  sh("git --git-dir " + mirror.string() + " update-ref refs/kernelhub/own refs/heads/main");
  const fs::path work = fs::current_path() / "work";
  sh(git_in(work) + " commit -q --allow-empty -m three");
  sh(git_in(work) + " branch -D v1");
  sh(git_in(work) + " push -q --mirror " + upstream.string());
  const auto fetched = fetch_into(mirror, {"file://" + upstream.string(), ""});
  ASSERT_TRUE(fetched) << fetched.error().message;
  EXPECT_EQ(fetched->changed, 2u);  // main moved, v1 removed
  EXPECT_EQ(refs_of(mirror), refs_of(upstream));
  EXPECT_FALSE(sh("git --git-dir " + mirror.string() + " rev-parse refs/kernelhub/own").empty());
}

TEST(RepositoryFetch, AnUnreachableUpstreamChangesNothingAndSaysWhy) {
  const fs::path upstream = make_upstream();
  const fs::path mirror = fs::current_path() / "mirror.git";
  ASSERT_TRUE(init_mirror_repository(mirror, "http://127.0.0.1:9", false));
  ASSERT_TRUE(fetch_into(mirror, {"file://" + upstream.string(), ""}));
  const std::string before = refs_of(mirror);
  const auto failed = fetch_into(mirror, {"http://127.0.0.1:9/ns/name.git", "token"});
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find("127.0.0.1:9"), std::string::npos)
      << failed.error().message;
  EXPECT_EQ(refs_of(mirror), before);
}

TEST(RepositoryFetch, ALocalRepositoryHasNoUpstream) {
  const fs::path dir = fs::current_path() / "local.git";
  sh(k_git + " init -q --bare " + dir.string());
  EXPECT_EQ(mirrored_upstream(dir), std::nullopt);
  EXPECT_EQ(mirrored_upstream(fs::current_path() / "missing.git"), std::nullopt);
}

}  // namespace kernelhub::server
