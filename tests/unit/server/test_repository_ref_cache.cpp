// SPDX-License-Identifier: Apache-2.0
// The per-thread ref cache (issue 25): a ref moved by git, loose or packed, deleted or
// recreated is read again at its next use; an entry is used while its files are unchanged,
// and a ref changed within the settle time is never kept. The refs are moved with the git
// command line, as an operator or a push would, not through the cache's own process.
#include <kernelhub/server/repository_ref_cache.hpp>

#include <git2.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "server_test_support.hpp"

namespace kernelhub::server {

namespace {

namespace fs = std::filesystem;

using testing::have_git;

using testing::RepoCloser;

class RefCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_git()) {
      GTEST_SKIP() << "needs git";
    }
    git_libgit2_init();
    m_dir = fs::current_path() / "repo.git";
    ASSERT_EQ(std::system(("git init -q --bare " + m_dir.string()).c_str()), 0);
    m_first = make_commit("first");
    m_second = make_commit("second");
    ASSERT_NE(m_first, m_second);
    git_repository* raw = nullptr;
    ASSERT_EQ(git_repository_open_bare(&raw, m_dir.c_str()), 0);
    m_repo.reset(raw);
  }

  void TearDown() override {
    if (m_repo) {
      m_repo.reset();
      git_libgit2_shutdown();
    }
  }

  // A commit of the empty tree with `message`: its id.
  std::string make_commit(const std::string& message) {
    const std::string git = "git --git-dir=" + m_dir.string();
    const std::string command =
        "GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t " +
        git + " commit-tree -m " + message + " $(" + git + " mktree < /dev/null) > oid.txt";
    EXPECT_EQ(std::system(command.c_str()), 0);
    std::string oid;
    std::ifstream("oid.txt") >> oid;
    return oid;
  }

  void git(const std::string& arguments) {
    ASSERT_EQ(std::system(("git --git-dir=" + m_dir.string() + " " + arguments).c_str()), 0);
  }

  fs::path m_dir;
  std::string m_first;
  std::string m_second;
  std::unique_ptr<git_repository, RepoCloser> m_repo;
};

}  // namespace

TEST_F(RefCacheTest, AMovedLooseRefIsReadAgainAtOnce) {
  RefCache cache(std::chrono::nanoseconds(0));
  git("update-ref refs/heads/main " + m_first);
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/main"), m_first);
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/main"), m_first);
  EXPECT_EQ(cache.hits(), 1u);  // the second answer came from the entry
  git("update-ref refs/heads/main " + m_second);
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/main"), m_second);
  EXPECT_EQ(cache.hits(), 1u);
  git("update-ref refs/heads/main " + m_first);
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/main"), m_first);
}

TEST_F(RefCacheTest, AMovedPackedRefIsReadAgainAtOnce) {
  RefCache cache(std::chrono::nanoseconds(0));
  git("update-ref refs/heads/main " + m_first);
  git("pack-refs --all --prune");
  ASSERT_FALSE(fs::exists(m_dir / "refs/heads/main"));
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/main"), m_first);
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/main"), m_first);
  EXPECT_EQ(cache.hits(), 1u);
  // Moved and packed again: only packed-refs changed.
  git("update-ref refs/heads/main " + m_second);
  git("pack-refs --all --prune");
  ASSERT_FALSE(fs::exists(m_dir / "refs/heads/main"));
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/main"), m_second);
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/main"), m_second);
  EXPECT_EQ(cache.hits(), 2u);
}

TEST_F(RefCacheTest, ALooseRefOverAPackedOneWinsAtOnce) {
  RefCache cache(std::chrono::nanoseconds(0));
  git("update-ref refs/heads/main " + m_first);
  git("pack-refs --all --prune");
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/main"), m_first);
  // A loose file beside packed-refs, which still names the first commit.
  std::ofstream(m_dir / "refs/heads/main") << m_second << "\n";
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/main"), m_second);
  // And the loose file removed: packed-refs counts again.
  fs::remove(m_dir / "refs/heads/main");
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/main"), m_first);
  EXPECT_EQ(cache.hits(), 0u);
}

TEST_F(RefCacheTest, ADeletedRefIsGoneAndARecreatedOneIsRead) {
  RefCache cache(std::chrono::nanoseconds(0));
  git("update-ref refs/heads/dev " + m_first);
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/dev"), m_first);
  git("update-ref -d refs/heads/dev");
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/dev"), std::nullopt);
  git("update-ref refs/heads/dev " + m_second);
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/dev"), m_second);
  EXPECT_EQ(cache.hits(), 0u);
}

TEST_F(RefCacheTest, ARefChangedWithinTheSettleTimeIsNotKept) {
  // A ref just written may change again within its file system's timestamp granularity
  // without its stamp changing: it is read from its file until it is older.
  RefCache cache(std::chrono::hours(1));
  git("update-ref refs/heads/main " + m_first);
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/main"), m_first);
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/main"), m_first);
  EXPECT_EQ(cache.hits(), 0u);
}

TEST_F(RefCacheTest, ASymbolicRefIsNotKept) {
  RefCache cache(std::chrono::nanoseconds(0));
  git("update-ref refs/heads/main " + m_first);
  git("symbolic-ref refs/heads/alias refs/heads/main");
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/alias"), m_first);
  git("update-ref refs/heads/main " + m_second);
  // The alias's own file did not change; its target did.
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/alias"), m_second);
  EXPECT_EQ(cache.hits(), 0u);
}

TEST_F(RefCacheTest, AFullCacheStartsOver) {
  RefCache cache(std::chrono::nanoseconds(0), 2);
  for (const char* name : {"a", "b", "c"}) {
    git(std::string("update-ref refs/heads/") + name + " " + m_first);
    EXPECT_EQ(cache.peel(m_repo.get(), std::string("refs/heads/") + name), m_first);
  }
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/c"), m_first);
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.peel(m_repo.get(), "refs/heads/b"), m_first);  // dropped, read again
  EXPECT_EQ(cache.hits(), 1u);
}

}  // namespace kernelhub::server
