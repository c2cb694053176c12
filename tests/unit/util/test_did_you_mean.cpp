// SPDX-License-Identifier: Apache-2.0
#include <array>
#include <string_view>

#include <gtest/gtest.h>

#include <kernelhub/util/did_you_mean.hpp>

using namespace kernelhub::util;

TEST(DidYouMean, EditDistanceCountsTranspositionOnce) {
  EXPECT_EQ(edit_distance("cuda", "cuda"), 0u);
  EXPECT_EQ(edit_distance("cdua", "cuda"), 1u);
  EXPECT_EQ(edit_distance("cudaa", "cuda"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("CUDA", "cuda"), 0u);
}

TEST(DidYouMean, SuggestsOnlyPlausibleTypos) {
  constexpr std::array<std::string_view, 3> keys = {"backends", "license", "version"};
  EXPECT_EQ(did_you_mean("backend", keys), "did you mean \"backends\"?");
  EXPECT_EQ(did_you_mean("licence", keys), "did you mean \"license\"?");
  EXPECT_EQ(did_you_mean("zzzzzz", keys), "");
  EXPECT_FALSE(closest_match("x", keys).has_value());
}
