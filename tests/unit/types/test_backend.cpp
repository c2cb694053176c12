// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/types/backend.hpp>

using namespace kernelhub::types;

TEST(Backend, ParsesCaseInsensitivelyAndRoundTrips) {
  for (auto backend : k_all_backends) {
    EXPECT_EQ(parse_backend(to_string(backend)).value(), backend);
  }
  EXPECT_EQ(parse_backend("CUDA").value(), Backend::cuda);
}

TEST(Backend, UnknownBackendSuggestsTheClosest) {
  auto result = parse_backend("cudaa");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message, "unknown backend \"cudaa\"; did you mean \"cuda\"?");
}

TEST(Backend, MetadataNamesAreExact) {
  EXPECT_EQ(backend_from_name("tpu"), Backend::tpu);
  EXPECT_FALSE(backend_from_name("CUDA"));
  EXPECT_FALSE(backend_from_name(" cuda"));
}
