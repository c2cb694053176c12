// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/cache/pattern_filter.hpp>

namespace kernelhub::cache {
namespace {

TEST(PatternFilter, StarCrossesSlashes) {
  EXPECT_TRUE(glob_match("build/*", "build/torch-cpu/ops/__init__.py"));
  EXPECT_TRUE(glob_match("*.json", "a/b/config.json"));
  EXPECT_FALSE(glob_match("build/*", "README.md"));
}

TEST(PatternFilter, CaseSensitiveWithClassesAndQuestionMarks) {
  EXPECT_FALSE(glob_match("*.JSON", "config.json"));
  EXPECT_TRUE(glob_match("v?.txt", "v1.txt"));
  EXPECT_TRUE(glob_match("[!a]*", "bcd"));
  EXPECT_FALSE(glob_match("[!a]*", "abc"));
}

TEST(PatternFilter, NoFilterAllowsEverythingAndEmptyAllowsNothing) {
  EXPECT_TRUE(PatternFilter().matches("anything/at/all"));
  EXPECT_FALSE(PatternFilter(std::vector<std::string>{}, {}).matches("a"));
}

TEST(PatternFilter, IgnoreWinsOverAllowAndDirectoriesGetAStar) {
  const PatternFilter filter(std::vector<std::string>{"build/torch-cpu/"},
                             {"*.pyc", "**/__pycache__/**"});
  EXPECT_TRUE(filter.matches("build/torch-cpu/relu/__init__.py"));
  EXPECT_FALSE(filter.matches("build/torch-cpu/relu/x.pyc"));
  EXPECT_FALSE(filter.matches("build/torch-cpu/relu/__pycache__/x.py"));
  EXPECT_FALSE(filter.matches("build/torch-cuda/relu/__init__.py"));
}

TEST(PatternFilter, BackslashesCountAsSlashes) {
  EXPECT_TRUE(PatternFilter(std::vector<std::string>{"build\\*"}, {}).matches("build/x"));
}

}  // namespace
}  // namespace kernelhub::cache
