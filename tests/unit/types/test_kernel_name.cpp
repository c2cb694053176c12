// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/types/kernel_name.hpp>

using kernelhub::types::KernelName;

TEST(KernelName, AcceptsReferenceExamples) {
  for (auto good : {"my-kernel", "relu2d", "flash-attention", "ab", "a1"}) {
    EXPECT_TRUE(KernelName::parse(good)) << good;
  }
  EXPECT_EQ(KernelName::parse("flash-attention").value().python_name(), "flash_attention");
}

TEST(KernelName, RejectsBadNames) {
  for (auto bad : {"", "a", "1relu", "Relu", "relu-", "re_lu", "-relu", "relu kernel"}) {
    EXPECT_FALSE(KernelName::parse(bad)) << bad;
  }
}

TEST(KernelName, DefaultIsAnEmptyPlaceholder) {
  EXPECT_EQ(KernelName().str(), "");
  EXPECT_FALSE(KernelName::is_valid(KernelName().str()));
}
