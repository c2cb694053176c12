// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/abi/abi_data.hpp>

#include <array>

#include <gtest/gtest.h>

#include "abi_test_support.hpp"

namespace kernelhub::abi {
namespace {

using testing::embedded_data;


types::Version v(std::string_view text) { return *types::Version::parse(text); }

TEST(AbiData, EmbeddedManylinuxPolicyIsAuditwheels) {
  const auto& policies = embedded_data().manylinux;
  ASSERT_GE(policies.size(), 15u);
  auto policy = resolve_policy("manylinux_2_28", policies, embedded_data().kernel);
  ASSERT_TRUE(policy);
  const auto& x86 = policy->manylinux->symbol_versions.at("x86_64");
  EXPECT_TRUE(x86.at("GLIBC").contains("2.28"));
  EXPECT_FALSE(x86.at("GLIBC").contains("2.29"));
  EXPECT_TRUE(x86.at("GLIBCXX").contains("3.4.24"));
  EXPECT_FALSE(x86.at("GLIBCXX").contains("3.4.25"));
  EXPECT_TRUE(x86.at("CXXABI").contains("TM_1"));
  EXPECT_TRUE(policy->manylinux->lib_whitelist.contains("libstdc++.so.6"));
}

TEST(AbiData, EmbeddedPythonStableAbi) {
  const auto& table = embedded_data().python_stable_abi;
  EXPECT_GT(table.size(), 900u);  // about 825 functions and 143 data symbols
  ASSERT_NE(table.find("PyBuffer_Release"), nullptr);
  EXPECT_EQ(*table.find("PyBuffer_Release"), v("3.11"));
  // _PyObject_New is in the stable ABI (abi_only: PyObject_New expands to it) since 3.2.
  ASSERT_NE(table.find("_PyObject_New"), nullptr);
  EXPECT_EQ(*table.find("_PyObject_New"), v("3.2"));
  EXPECT_EQ(table.find("_PyObject_GetDictPtr"), nullptr);
  ASSERT_NE(table.find("PyExc_TypeError"), nullptr);  // data entries too
}

TEST(AbiData, EmbeddedTorchTables) {
  const auto& shims = embedded_data().torch_shims;
  EXPECT_GT(shims.size(), 100u);
  ASSERT_NE(shims.find("torch_call_dispatcher"), nullptr);
  EXPECT_EQ(*shims.find("torch_call_dispatcher"), v("2.10"));
  for (auto stem : std::array{"libtorch_cpu", "libc10", "libcudart", "libcublas", "libamdhip64"}) {
    EXPECT_TRUE(embedded_data().torch_library_stems.contains(stem)) << stem;
  }
  EXPECT_FALSE(embedded_data().torch_library_stems.contains("libstdc++"));
}

TEST(AbiData, MissingFileIsAnError) {
  auto files = abi_data_files();
  std::vector<util::EmbeddedFile> without(files.begin(), files.end());
  without.pop_back();
  auto parsed = AbiData::parse(without);
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().message.find("is missing"), std::string::npos);
}

TEST(AbiData, MalformedFileNamesItself) {
  std::vector<util::EmbeddedFile> files(abi_data_files().begin(), abi_data_files().end());
  for (auto& file : files) {
    if (file.path == "python-stable-abi.tsv") {
      file.data = "PyFoo\tfunction\tnot-a-version\n";
    }
  }
  auto parsed = AbiData::parse(files);
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().message.find("python-stable-abi.tsv: line 1"), std::string::npos);
}

TEST(AbiData, LibraryStem) {
  EXPECT_EQ(library_stem("libcudart.so.12"), "libcudart");
  EXPECT_EQ(library_stem("libc10.so"), "libc10");
  EXPECT_EQ(library_stem("noext"), "noext");
}

}  // namespace
}  // namespace kernelhub::abi
