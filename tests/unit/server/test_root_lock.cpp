// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/root_lock.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace kernelhub::server {

namespace {

TEST(RootLock, ASecondHolderIsRefusedWithTheFirstsPid) {
  const auto root = std::filesystem::current_path();
  auto first = RootLock::acquire(root);
  ASSERT_TRUE(first) << first.error().message;
  std::string pid;
  std::ifstream(root / ".kernelhub-serve.lock") >> pid;
  EXPECT_EQ(pid, std::to_string(::getpid()));
  // flock belongs to the open file, so a second open in this same process conflicts too.
  const auto second = RootLock::acquire(root);
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find("another kernelhub serve (pid " + pid + ")"),
            std::string::npos)
      << second.error().message;
  EXPECT_NE(second.error().message.find(root.string()), std::string::npos);
}

TEST(RootLock, TheLockIsFreeAgainOnceItsHolderIsGone) {
  const auto root = std::filesystem::current_path();
  {
    auto held = RootLock::acquire(root);
    ASSERT_TRUE(held);
    RootLock moved = std::move(*held);  // the moved-from one releases nothing
  }
  EXPECT_TRUE(RootLock::acquire(root));
}

TEST(RootLock, AnUnwritableRootIsAnErrorNotALock) {
  EXPECT_FALSE(RootLock::acquire(std::filesystem::current_path() / "no" / "such" / "root"));
}

}  // namespace

}  // namespace kernelhub::server
