// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <kernelhub/checks/native_op_registration_check.hpp>

namespace kernelhub::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<util::Diagnostic> check(std::string_view source) {
  util::DiagnosticCollector sink;
  check_native_op_registrations("torch_binding.cpp", source, sink);
  return sink.sorted();
}

std::vector<std::string> places(std::string_view source) {
  std::vector<std::string> out;
  for (const auto& d : check(source)) {
    out.push_back(std::to_string(d.location.line) + ":" + std::to_string(d.location.column));
  }
  return out;
}

TEST(NativeOpRegistrationCheck, TheGeneratedFormPasses) {
  EXPECT_THAT(check(R"cc(#include <torch/library.h>
#include "registration.h"
TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("relu(Tensor! out, Tensor input) -> ()");
  ops.impl("relu", torch::kCPU, &relu);
}
TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, CUDA, ops) { ops.impl("relu", &relu); }
STABLE_TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, m) { m.def("f(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(aten, CPU, m) { m.impl("aten::relu", &relu); }
REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
)cc"),
              IsEmpty());
}

TEST(NativeOpRegistrationCheck, AFixedNamespaceInTheBlockIsLocatedWithTheFix) {
  const auto found = check("\n  TORCH_LIBRARY(mykernel, ops) {\n}\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].location.line, 2u);
  EXPECT_EQ(found[0].location.column, 3u);
  EXPECT_EQ(found[0].message,
            "TORCH_LIBRARY registers the kernel's ops under the fixed namespace \"mykernel\"");
  EXPECT_THAT(found[0].hint, HasSubstr("`TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops)`"));
  EXPECT_EQ(found[0].source_line, "  TORCH_LIBRARY(mykernel, ops) {");
}

TEST(NativeOpRegistrationCheck, EveryFormOfTheBlock) {
  const auto found = check(R"cc(TORCH_LIBRARY(TORCH_EXTENSION_NAME, m) {}
TORCH_LIBRARY_FRAGMENT(mine, m) {}
TORCH_LIBRARY_IMPL(mine, CUDA, impls) {}
STABLE_TORCH_LIBRARY_IMPL(mine, CPU, m) {}
TORCH_LIBRARY_EXPAND(mine, m) {}
)cc");
  ASSERT_EQ(found.size(), 5u);
  EXPECT_EQ(found[0].message,
            "TORCH_LIBRARY takes its namespace literally: \"TORCH_EXTENSION_NAME\" is not "
            "expanded");
  EXPECT_THAT(found[1].message, HasSubstr("TORCH_LIBRARY_FRAGMENT registers"));
  EXPECT_THAT(found[2].hint,
              HasSubstr("`TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, CUDA, impls)`"));
  EXPECT_THAT(found[3].hint,
              HasSubstr("`STABLE_TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, CPU, m)`"));
  EXPECT_EQ(found[4].location.line, 5u);
}

TEST(NativeOpRegistrationCheck, ANamespaceInASchemaOrName) {
  const auto found = check("TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {\n"
                           "  ops.def(\"mykernel::gelu(Tensor x) -> Tensor\");\n"
                           "  ops.impl(\"mykernel::gelu\", torch::kCPU, &gelu);\n"
                           "  lib->def(\n      \"other::f() -> ()\");\n}\n");
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].location.line, 2u);
  EXPECT_EQ(found[0].location.column, 11u);  // at the string
  EXPECT_EQ(found[0].message,
            "the schema \"mykernel::gelu(Tensor x) -> Tensor\" names the namespace \"mykernel\"");
  EXPECT_THAT(found[0].hint, HasSubstr("write `def(\"gelu\"...)` without \"mykernel::\""));
  EXPECT_EQ(found[1].message, "the op name \"mykernel::gelu\" names the namespace \"mykernel\"");
  EXPECT_EQ(found[2].location.line, 5u);
}

TEST(NativeOpRegistrationCheck, CommentsStringsAndDefinesAreNotCode) {
  EXPECT_THAT(places(R"cc(// TORCH_LIBRARY(mykernel, ops)
/* ops.def("mykernel::f() -> ()"); */
#define TORCH_LIBRARY_EXPAND(NAME, MODULE) TORCH_LIBRARY(NAME, MODULE)
#define MULTI(NAME) \
  TORCH_LIBRARY(NAME, m)
const char* s = "TORCH_LIBRARY(mykernel, ops)";
auto r = R"x(TORCH_LIBRARY(mykernel, ops))x";
int n = 1'000;
m.def("plain_name", &f);
TORCH_LIBRARY(late, ops) {}
)cc"),
              ElementsAre("10:1"));
}

TEST(NativeOpRegistrationCheck, NativeSources) {
  EXPECT_TRUE(is_native_source("csrc/gelu.cu"));
  EXPECT_TRUE(is_native_source("torch-ext/torch_binding.cpp"));
  EXPECT_TRUE(is_native_source("metal/k.mm"));
  EXPECT_TRUE(is_native_source("hip/k.hip"));
  EXPECT_FALSE(is_native_source("metal/k.metal"));
  EXPECT_FALSE(is_native_source("a.cpp.d/readme"));
  EXPECT_FALSE(is_native_source("torch-ext/relu/__init__.py"));
}

}  // namespace
}  // namespace kernelhub::checks
