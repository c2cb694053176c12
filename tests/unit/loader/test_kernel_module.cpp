// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/loader/kernel_module.hpp>

#include "loader_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using namespace kernelhub::loader;
using namespace kernelhub::loader::testing;

TEST(KernelModule, ImportsUnderTheMetadataId) {
  make_variant("v", "silu-and-mul", "_silu_and_mul_cpu_abc1234");
  const auto module = resolve_kernel_module("v");
  ASSERT_TRUE(module) << module.error().message;
  EXPECT_EQ(module->module_name, "_silu_and_mul_cpu_abc1234");
  EXPECT_EQ(module->python_name, "silu_and_mul");
  EXPECT_EQ(module->entry_file, fs::current_path() / "v" / "__init__.py");
  EXPECT_FALSE(module->legacy());
  EXPECT_TRUE(module->warnings.empty());
}

TEST(KernelModule, PackageFolderNamedAfterTheKernel) {
  write("v/metadata.json", metadata_json("relu", "_relu_1"));
  write("v/relu/__init__.py", "");
  const auto module = resolve_kernel_module("v");
  ASSERT_TRUE(module) << module.error().message;
  EXPECT_EQ(module->entry_file, fs::current_path() / "v" / "relu" / "__init__.py");
  EXPECT_EQ(module->module_name, "_relu_1");
}

TEST(KernelModule, NoEntryFileIsAnError) {
  write("v/metadata.json", metadata_json("relu", "_relu_1"));
  const auto module = resolve_kernel_module("v");
  ASSERT_FALSE(module);
  EXPECT_NE(module.error().message.find("no kernel module found at"), std::string::npos);
}

TEST(KernelModule, BadMetadataWithAnIdIsAnError) {
  write("v/metadata.json", "{\"id\": \"_x\"}");
  write("v/__init__.py", "");
  EXPECT_FALSE(resolve_kernel_module("v"));
}

TEST(KernelModule, MetadataWithoutIdLoadsUnderAPathName) {
  write("a/build/torch-cpu/metadata.json", "{\"name\": \"relu\", \"python-depends\": []}");
  write("a/build/torch-cpu/__init__.py", "");
  write("b/build/torch-cpu/metadata.json", "{\"name\": \"relu\", \"python-depends\": []}");
  write("b/build/torch-cpu/__init__.py", "");
  const auto first = resolve_kernel_module("a/build/torch-cpu");
  const auto second = resolve_kernel_module("b/build/torch-cpu");
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_TRUE(second);
  EXPECT_TRUE(first->legacy());
  EXPECT_TRUE(first->module_name.starts_with("relu_"));
  EXPECT_NE(first->module_name, second->module_name);
  ASSERT_EQ(first->warnings.size(), 1u);
  EXPECT_NE(first->warnings[0].find("has no id"), std::string::npos);
}

TEST(KernelModule, PreFlatteningLayoutWithoutMetadata) {
  write("my-kernel/build/torch210-cxx11-cpu-x86_64-linux/my_kernel/__init__.py", "");
  const auto module = resolve_kernel_module("my-kernel/build/torch210-cxx11-cpu-x86_64-linux");
  ASSERT_TRUE(module) << module.error().message;
  EXPECT_EQ(module->python_name, "my_kernel");
  EXPECT_EQ(module->entry_file.parent_path().filename(), "my_kernel");
  EXPECT_TRUE(module->module_name.starts_with("my_kernel_"));
  EXPECT_NE(module->warnings.at(0).find("no metadata.json"), std::string::npos);
}

TEST(KernelModule, FlatLayoutWithoutMetadataTakesTheRepoName) {
  write("my-kernel/build/torch-cpu/__init__.py", "");
  const auto module = resolve_kernel_module("my-kernel/build/torch-cpu");
  ASSERT_TRUE(module);
  EXPECT_TRUE(module->module_name.starts_with("my_kernel_"));
}

TEST(KernelModule, DirtyBuildWarns) {
  write("v/metadata.json",
        "{\"name\": \"relu\", \"id\": \"_relu_1\", \"version\": 1, \"license\": \"MIT\", "
        "\"python-depends\": [], \"backend\": {\"type\": \"cpu\"}, \"provenance\": "
        "{\"kernel-builder\": {\"version\": \"0.1.0\"}, \"kernel\": {\"commit\": "
        "\"0123456789012345678901234567890123456789\", \"dirty\": true}}}");
  write("v/__init__.py", "");
  const auto module = resolve_kernel_module("v");
  ASSERT_TRUE(module) << module.error().message;
  EXPECT_TRUE(module->warnings.empty());
  // kernels' DirtyValidator text, naming what was dirty and the variant folder.
  EXPECT_EQ(module->dirty_build,
            std::optional<std::string>(
                "Kernel 'relu' variant 'v' was built from a dirty git tree (kernel source had "
                "uncommitted changes). Its recorded git revision does not fully identify the "
                "sources it was built from, so the build may not be reproducible."));
}

std::string minver_metadata(const std::string& minver) {
  return "{\"name\": \"relu\", \"id\": \"_relu_1\", \"version\": 1, \"license\": \"MIT\", "
         "\"python-depends\": [], \"backend\": {\"type\": \"cpu\"}, \"kernels-minver\": \"" +
         minver + "\"}";
}

TEST(KernelModule, KernelsMinverNewerThanTheCompatVersionIsRefused) {
  write("relu/build/torch-cpu/metadata.json", minver_metadata("999.1.0"));
  write("relu/build/torch-cpu/__init__.py", "");
  const auto module = resolve_kernel_module("relu/build/torch-cpu");
  ASSERT_TRUE(module) << module.error().message;
  const auto checked = check_kernels_minver(*module);
  ASSERT_FALSE(checked);
  EXPECT_TRUE(checked.error().message.starts_with(
      "Kernel 'relu' variant 'torch-cpu' requires kernels>=999.1.0, but version 0.17.2 is "
      "installed (the kernels API of kernelhub "))
      << checked.error().message;
}

// kernels compares with its __version__ as it reads at the check, and passes a version it
// cannot parse ("0.17.0-dirty"); Python hands over kernelhub.compat_version the same way.
TEST(KernelModule, KernelsMinverAgainstTheInstalledVersionGiven) {
  write("relu/build/torch-cpu/metadata.json", minver_metadata("0.18.0"));
  write("relu/build/torch-cpu/__init__.py", "");
  const auto module = resolve_kernel_module("relu/build/torch-cpu");
  ASSERT_TRUE(module) << module.error().message;
  EXPECT_FALSE(check_kernels_minver(*module));
  EXPECT_TRUE(check_kernels_minver(*module, "0.18.1"));
  EXPECT_TRUE(check_kernels_minver(*module, "0.17.0-dirty"));
  const auto refused = check_kernels_minver(*module, "0.17.9");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("but version 0.17.9 is installed"), std::string::npos);
}

TEST(KernelModule, KernelsMinverUpToTheCompatVersionPasses) {
  for (const std::string minver : {"0.17.2", "0.17.0", "0.0.1"}) {
    write("v/metadata.json", minver_metadata(minver));
    write("v/__init__.py", "");
    const auto module = resolve_kernel_module("v");
    ASSERT_TRUE(module) << module.error().message;
    EXPECT_TRUE(check_kernels_minver(*module)) << minver;
  }
  // The next patch release is already too new; no kernels-minver at all passes.
  write("v/metadata.json", minver_metadata("0.17.3"));
  EXPECT_FALSE(check_kernels_minver(*resolve_kernel_module("v")));
  write("v/metadata.json", metadata_json("relu", "_relu_1"));
  EXPECT_TRUE(check_kernels_minver(*resolve_kernel_module("v")));
}

TEST(KernelModule, LegacyNamesAreStablePerPath) {
  EXPECT_EQ(legacy_module_name("relu", "/a/b"), legacy_module_name("relu", "/a/b"));
  EXPECT_NE(legacy_module_name("relu", "/a/b"), legacy_module_name("relu", "/a/c"));
}

}  // namespace

namespace {

TEST(KernelModule, ACachedVariantsMetadataIsParsedOnceAProcess) {
  // A snapshot's metadata.json links to blobs/<content hash>: one name, one content, so what it
  // parsed to is kept (the digest check parsed it just before). The name is this test's own.
  const std::string blob = "6a3c0e5d1f2b4a79c8e0d1f2a3b4c5d6e7f80911";
  write("repo/blobs/" + blob, metadata_json("relu", "_relu_memo_1"));
  write("repo/snapshots/c/v/__init__.py", "");
  fs::create_symlink("../../../blobs/" + blob, "repo/snapshots/c/v/metadata.json");
  const auto first = resolve_kernel_module("repo/snapshots/c/v");
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->module_name, "_relu_memo_1");
  write("repo/blobs/" + blob, metadata_json("relu", "_relu_memo_2"));
  const auto second = resolve_kernel_module("repo/snapshots/c/v");
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->module_name, "_relu_memo_1");

  // A local build's metadata.json is a file of its own: read on every resolve.
  make_variant("w", "relu", "_relu_local_1");
  ASSERT_EQ(resolve_kernel_module("w")->module_name, "_relu_local_1");
  write("w/metadata.json", metadata_json("relu", "_relu_local_2"));
  EXPECT_EQ(resolve_kernel_module("w")->module_name, "_relu_local_2");
}

}  // namespace
