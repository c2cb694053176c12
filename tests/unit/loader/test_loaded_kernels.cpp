// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/loader/loaded_kernels.hpp>

namespace {

namespace fs = std::filesystem;
using namespace kernelhub::loader;

LoadedKernel kernel(const fs::path& path, const std::string& name) {
  LoadedKernel loaded;
  loaded.module.variant_path = path;
  loaded.module.module_name = name;
  return loaded;
}

TEST(LoadedKernels, OneRecordPerPathFirstWins) {
  fs::create_directories("a");
  fs::create_directories("b");
  LoadedKernelRegistry registry;
  EXPECT_EQ(registry.add(kernel("a", "_k_1")).module.module_name, "_k_1");
  EXPECT_EQ(registry.add(kernel("./a/", "_k_other")).module.module_name, "_k_1");
  registry.add(kernel("b", "_k_2"));
  const auto all = registry.list();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].module.module_name, "_k_2");
  ASSERT_TRUE(registry.find(fs::current_path() / "a"));
  EXPECT_FALSE(registry.find("c"));
}

TEST(LoadedKernels, RemoveForgetsOnePathAndKeepsTheOrder) {
  fs::create_directories("a");
  fs::create_directories("b");
  fs::create_directories("c");
  LoadedKernelRegistry registry;
  registry.add(kernel("a", "_k_1"));
  registry.add(kernel("b", "_k_2"));
  registry.add(kernel("c", "_k_3"));
  EXPECT_TRUE(registry.remove("./b/"));
  EXPECT_FALSE(registry.remove("b"));
  EXPECT_FALSE(registry.find("b"));
  const auto all = registry.list();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].module.module_name, "_k_1");
  EXPECT_EQ(all[1].module.module_name, "_k_3");
  // A path loaded again after it was forgotten gets its new record.
  EXPECT_EQ(registry.add(kernel("b", "_k_2_again")).module.module_name, "_k_2_again");
}

}  // namespace
