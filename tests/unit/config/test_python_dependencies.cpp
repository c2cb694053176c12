// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/config/python_dependencies.hpp>

namespace kernelhub::config {
namespace {

using types::Backend;

TEST(PythonDependencies, BuiltinListMatchesTheReference) {
  const auto& deps = PythonDependencies::builtin();
  EXPECT_EQ(deps.names(std::nullopt), (std::vector<std::string>{"einops", "helion", "tvm-ffi"}));
  EXPECT_EQ(deps.names(Backend::cuda), std::vector<std::string>{"nvidia-cutlass-dsl"});
  EXPECT_EQ(deps.names(Backend::neuron), std::vector<std::string>{"nki"});
  EXPECT_EQ(deps.names(Backend::xpu), std::vector<std::string>{"onednn"});
  for (const auto backend : {Backend::cpu, Backend::metal, Backend::rocm}) {
    EXPECT_TRUE(deps.has_scope(backend));
    EXPECT_TRUE(deps.names(backend).empty());
  }
  // No allow-list at all, which the reference reports differently from an empty one.
  EXPECT_FALSE(deps.has_scope(Backend::tpu));
  EXPECT_FALSE(deps.has_scope(Backend::cann));
}

TEST(PythonDependencies, MapsNamesToPackagesAndImports) {
  const auto& deps = PythonDependencies::builtin();
  const auto* tvm = deps.find(std::nullopt, "tvm-ffi");
  ASSERT_NE(tvm, nullptr);
  EXPECT_EQ(*tvm, (std::vector<PythonPackage>{{"apache-tvm-ffi", "tvm_ffi"}}));
  const auto* cutlass = deps.find(Backend::cuda, "nvidia-cutlass-dsl");
  ASSERT_NE(cutlass, nullptr);
  EXPECT_EQ(cutlass->at(0).import_name, "cutlass");
  const auto* onednn = deps.find(Backend::xpu, "onednn");
  ASSERT_NE(onednn, nullptr);
  EXPECT_EQ(*onednn, (std::vector<PythonPackage>{{"onednn-devel", std::nullopt}}));
  // Scopes do not leak into each other.
  EXPECT_EQ(deps.find(Backend::cuda, "einops"), nullptr);
  EXPECT_EQ(deps.find(std::nullopt, "nki"), nullptr);
  EXPECT_EQ(deps.find(Backend::tpu, "einops"), nullptr);
}

TEST(PythonDependencies, RejectsMalformedLists) {
  EXPECT_EQ(PythonDependencies::parse("[]").error().message,
            "python dependencies: not a JSON object");
  EXPECT_EQ(PythonDependencies::parse("{\"general\": {\"x\": {}}}").error().message,
            "general.x: expected an array of packages");
  EXPECT_EQ(
      PythonDependencies::parse("{\"general\": {\"x\": [{\"import\": \"x\"}]}}").error().message,
      "general.x: each package needs a \"package\" string");
  EXPECT_FALSE(PythonDependencies::parse("{\"backends\": {\"gpu\": {}}}"));
  const auto ok =
      PythonDependencies::parse("{\"backends\": {\"cpu\": {\"a\": [{\"package\": \"b\"}]}}}");
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->names(std::nullopt).empty());
  EXPECT_EQ(ok->find(Backend::cpu, "a")->at(0).package, "b");
}

}  // namespace
}  // namespace kernelhub::config
