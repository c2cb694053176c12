// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/types/kernel_dependency.hpp>

using kernelhub::types::KernelDependency;

TEST(KernelDependency, NeedsExactlyOneOfVersionAndRevision) {
  EXPECT_TRUE((KernelDependency{"a/b", 1, std::nullopt}.check()));
  EXPECT_TRUE((KernelDependency{"a/b", std::nullopt, "main"}.check()));
  EXPECT_EQ((KernelDependency{"a/b", 1, "main"}.check().error().message),
            "\"version\" and \"revision\" are mutually exclusive");
  EXPECT_EQ((KernelDependency{"a/b", std::nullopt, std::nullopt}.check().error().message),
            "either \"version\" or \"revision\" must be specified");
}
