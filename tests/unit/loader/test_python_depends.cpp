// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/loader/python_depends.hpp>

namespace {

using namespace kernelhub::loader;
using kernelhub::config::PythonDependencies;
using kernelhub::types::Backend;

TEST(PythonDepends, GeneralAndBackendNames) {
  const auto& table = PythonDependencies::builtin();
  const auto imports =
      required_imports("relu", {"einops", "nvidia-cutlass-dsl"}, Backend::cuda, table);
  ASSERT_TRUE(imports) << imports.error().message;
  ASSERT_EQ(imports->size(), 2u);
  EXPECT_EQ((*imports)[0], (RequiredImport{"einops", "einops"}));
  EXPECT_EQ((*imports)[1], (RequiredImport{"nvidia-cutlass-dsl", "cutlass"}));
}

TEST(PythonDepends, BackendNameOnOtherBackendIsRejected) {
  const auto imports =
      required_imports("relu", {"nvidia-cutlass-dsl"}, Backend::cpu, PythonDependencies::builtin());
  ASSERT_FALSE(imports);
  EXPECT_EQ(imports.error().message,
            "Kernel module `relu` uses unsupported kernel dependency: nvidia-cutlass-dsl");
}

TEST(PythonDepends, PackagesWithoutImportAreNotChecked) {
  const auto imports =
      required_imports("k", {"onednn"}, Backend::xpu, PythonDependencies::builtin());
  ASSERT_TRUE(imports);
  EXPECT_TRUE(imports->empty());
}

TEST(PythonDepends, MissingImportMessage) {
  EXPECT_EQ(missing_import_message("relu", {"einops", "einops"}),
            "Kernel module `relu` requires Python dependency `einops`. Please install with: "
            "pip install einops");
}

}  // namespace
