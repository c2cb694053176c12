// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/metadata/kernel_id.hpp>

using namespace kernelhub;
using namespace kernelhub::metadata;

TEST(KernelId, UsesPythonNameBackendAndUnique) {
  const auto name = types::KernelName::parse("flash-attention").value();
  EXPECT_EQ(kernel_id(name, types::Backend::rocm, "abc1234"), "_flash_attention_rocm_abc1234");
}

TEST(KernelId, PrefersGivenThenTreeThenRandom) {
  const std::string tree = "7a4e5a7f00112233445566778899aabbccddeeff";
  EXPECT_EQ(unique_id({"abc1234_dirty", tree, true}, 0), "abc1234_dirty");
  EXPECT_EQ(unique_id({std::nullopt, tree, false}, 0), "7a4e5a7");
  EXPECT_EQ(unique_id({std::nullopt, tree, true}, 0), "7a4e5a7_dirty");
  // 8 little-endian bytes, base32 without padding: 13 characters.
  EXPECT_EQ(unique_id({}, 0), "aaaaaaaaaaaaa");
  EXPECT_EQ(unique_id({}, 1), "aeaaaaaaaaaaa");
  EXPECT_EQ(unique_id({}, ~std::uint64_t{0}), "7777777777776");
  EXPECT_EQ(unique_id({}).size(), 13u);
}

TEST(KernelId, Base32MatchesRfc4648Vectors) {
  // RFC 4648 §10, lowercased and without padding.
  EXPECT_EQ(base32_lower(""), "");
  EXPECT_EQ(base32_lower("f"), "my");
  EXPECT_EQ(base32_lower("fo"), "mzxq");
  EXPECT_EQ(base32_lower("foo"), "mzxw6");
  EXPECT_EQ(base32_lower("foob"), "mzxw6yq");
  EXPECT_EQ(base32_lower("fooba"), "mzxw6ytb");
  EXPECT_EQ(base32_lower("foobar"), "mzxw6ytboi");
}

TEST(KernelId, ValidatesPythonIdentifiers) {
  for (const auto* good : {"_relu_cuda_7a4e5a7", "a", "_", "A_1"}) {
    EXPECT_TRUE(is_python_identifier(good)) << good;
  }
  for (const auto* bad : {"", "1a", "a-b", "a b", "a.b", "\xC3\xA9"}) {
    EXPECT_FALSE(is_python_identifier(bad)) << bad;
  }
  const auto name = types::KernelName::parse("relu").value();
  EXPECT_TRUE(checked_kernel_id(name, types::Backend::cpu, "abc_dirty"));
  auto bad = checked_kernel_id(name, types::Backend::cpu, "abc-dirty");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "kernel id \"_relu_cpu_abc-dirty\" is not a valid Python identifier");
}
