// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/loader/local_kernels.hpp>

namespace {

using namespace kernelhub::loader;

TEST(LocalKernels, ParsesEntriesOnFirstEquals) {
  const auto parsed = parse_local_kernels("org/a=/p/a:org/b=/p/b=c");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[0], (LocalKernelOverride{"org/a", "/p/a"}));
  EXPECT_EQ((*parsed)[1], (LocalKernelOverride{"org/b", "/p/b=c"}));
}

TEST(LocalKernels, LaterEntryReplacesPathInPlace) {
  const auto parsed = parse_local_kernels("a=/1:b=/2:a=/3");
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[0], (LocalKernelOverride{"a", "/3"}));
  EXPECT_EQ((*parsed)[1].repo_id, "b");
}

TEST(LocalKernels, EntryWithoutEqualsIsTheReferenceError) {
  const auto parsed = parse_local_kernels("org/a=/p/a:broken");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message,
            "Invalid LOCAL_KERNELS entry: broken. Expected format: "
            "repo_id_1=path_1:repo_id_2=path_2");
  EXPECT_FALSE(parse_local_kernels(""));
  EXPECT_FALSE(parse_local_kernels("a=/x:"));  // a trailing colon leaves an empty entry
}

TEST(LocalKernels, EmptyRepoOrPathIsAccepted) {
  const auto parsed = parse_local_kernels("=:a=");
  ASSERT_TRUE(parsed);
  EXPECT_EQ((*parsed)[0], (LocalKernelOverride{"", ""}));
  EXPECT_EQ((*parsed)[1], (LocalKernelOverride{"a", ""}));
}

TEST(LocalKernels, FindsOneRepository) {
  const auto found = find_local_kernel("org/a=/p/a:org/b=/p/b", "org/b");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->value(), "/p/b");
  const auto missing = find_local_kernel("org/a=/p/a", "org/c");
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->has_value());
}

}  // namespace
