// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <kernelhub/checks/op_registration_check.hpp>

namespace kernelhub::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// "line:column" of every problem found in `source`.
std::vector<std::string> positions(std::string_view source) {
  util::DiagnosticCollector sink;
  check_op_registrations("ops.py", source, sink);
  std::vector<std::string> out;
  for (const auto& diagnostic : sink.sorted()) {
    out.push_back(std::to_string(diagnostic.location.line) + ":" +
                  std::to_string(diagnostic.location.column));
  }
  return out;
}

std::vector<util::Diagnostic> diagnostics(std::string_view source) {
  util::DiagnosticCollector sink;
  check_op_registrations("torch-ext/k/ops.py", source, sink);
  return sink.sorted();
}

TEST(OpRegistrationCheck, PrefixedRegistrationsPass) {
  EXPECT_THAT(positions(R"py(import torch
from ._ops import add_op_namespace_prefix, ops
from . import _ops

@torch.library.custom_op(add_op_namespace_prefix("silu"), mutates_args=())
def silu(x: torch.Tensor) -> torch.Tensor:
    return x

@torch.library.register_fake(add_op_namespace_prefix("silu"))
def _(x):
    return torch.empty_like(x)

@silu.register_fake
def _(x):
    return x

@silu.register_kernel("cpu")
def _(x):
    return x

torch.library.define(_ops.add_op_namespace_prefix("mul"), "(Tensor x) -> Tensor")
NAME = add_op_namespace_prefix("neg")
torch.library.custom_op(NAME, fn, mutates_args=())
torch.library.register_fake(silu, fake)
torch.library.register_kernel(ops.silu.default, "cpu", fn)
)py"),
              IsEmpty());
}

TEST(OpRegistrationCheck, DecoratorWithALiteralNameIsReportedAtTheAt) {
  auto found = diagnostics("import torch\n\n\n    \n@torch.library.custom_op(\"mylib::silu\", "
                           "mutates_args=())\ndef silu(x):\n    return x\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].location.file, "torch-ext/k/ops.py");
  EXPECT_EQ(found[0].location.line, 5u);
  EXPECT_EQ(found[0].location.column, 1u);
  EXPECT_EQ(found[0].message,
            "custom_op registers op \"mylib::silu\" without add_op_namespace_prefix");
  EXPECT_THAT(found[0].hint, HasSubstr("add_op_namespace_prefix(\"silu\")"));
  EXPECT_THAT(found[0].source_line, HasSubstr("@torch.library.custom_op"));
}

TEST(OpRegistrationCheck, EveryRegistrationFunctionWithAStringName) {
  EXPECT_THAT(positions(R"py(import torch
@torch.library.register_fake("lib::a")
def a(x): ...
@torch.library.register_kernel("lib::a", "cpu")
def b(x): ...
torch.library.register_autograd("lib::a", bw)
torch.library.register_vmap("lib::a", vm)
torch.library.register_torch_dispatch("lib::a", Mode, fn)
torch.library.register_autocast("lib::a", "cuda", torch.float16)
torch.library.define("lib::c", "(Tensor x) -> Tensor")
torch.library.impl("lib::c", "cpu", fn)
@torch.library.triton_op("lib::d", mutates_args=())
def d(x): ...
)py"),
              ElementsAre("2:1", "4:1", "6:1", "7:1", "8:1", "9:1", "10:1", "11:1", "12:1"));
}

TEST(OpRegistrationCheck, KeywordFormsThatTheReferenceMisses) {
  EXPECT_THAT(positions(R"py(import torch
@torch.library.custom_op(name="lib::a", mutates_args=())
def a(x): ...
torch.library.register_fake(op="lib::a", func=fake)
torch.library.define(qualname="lib::b", schema="(Tensor x) -> Tensor")
torch.library.custom_op(mutates_args=(), name=add_op_namespace_prefix("ok"))
)py"),
              ElementsAre("2:1", "4:1", "5:1"));
}

TEST(OpRegistrationCheck, AliasesOfTorchLibrary) {
  EXPECT_THAT(positions(R"py(from torch.library import custom_op as co, register_fake
import torch.library as tl
from torch import library
@co("lib::a", mutates_args=())
def a(x): ...
@register_fake("lib::a")
def _(x): ...
tl.define("lib::b", "(Tensor x) -> Tensor")
library.impl("lib::b", "cpu", fn)
from torch.library import define
define("lib::c", "() -> ()")
)py"),
              ElementsAre("4:1", "6:1", "8:1", "9:1", "11:1"));
}

TEST(OpRegistrationCheck, FStringsVariablesAndOtherExpressions) {
  auto found = diagnostics(R"py(import torch
NS = "lib"
NAME = "lib::a"
torch.library.custom_op(f"{NS}::a", fn, mutates_args=())
torch.library.custom_op(NAME, fn, mutates_args=())
torch.library.custom_op(make_name("a"), fn, mutates_args=())
torch.library.register_fake(NAME, fake)
)py");
  ASSERT_EQ(found.size(), 4u);
  EXPECT_THAT(found[0].message, HasSubstr("an op named by an f-string"));
  EXPECT_THAT(found[1].message, HasSubstr("op \"lib::a\""));
  EXPECT_THAT(found[2].message, HasSubstr("an op named by `make_name(\"a\")`"));
  EXPECT_THAT(found[3].message, HasSubstr("register_fake registers op \"lib::a\""));
}

TEST(OpRegistrationCheck, LibraryObjectsAndTheirMethods) {
  auto found = diagnostics(R"py(import torch
lib = torch.library.Library("mylib", "DEF")
lib.define("mylib::relu(Tensor x) -> Tensor")
lib.define("relu2(Tensor x) -> Tensor")
lib.impl("relu2", fn, "CPU")
aten = torch.library.Library("aten", "IMPL")
ok = torch.library.Library(add_op_namespace_prefix("").split("::")[0], "FRAGMENT")
frag = torch.library.Library(ns="other", kind="FRAGMENT")
torch.library.Library("chained", "DEF").define("chained::x() -> ()")
)py");
  std::vector<std::string> lines;
  for (const auto& d : found) {
    lines.push_back(std::to_string(d.location.line) + ":" + std::to_string(d.location.column));
  }
  EXPECT_THAT(lines, ElementsAre("2:7", "3:1", "8:8", "9:1", "9:41"));
  EXPECT_EQ(found[0].message,
            "torch.library.Library defines ops in the fixed namespace \"mylib\"");
}

TEST(OpRegistrationCheck, NestedAndConditionalRegistrationsAreSeen) {
  EXPECT_THAT(positions(R"py(import torch
def register():
    if torch.cuda.is_available():
        @torch.library.custom_op("lib::a", mutates_args=())
        def a(x): ...
class K:
    lib = torch.library.Library("lib", "DEF")
)py"),
              ElementsAre("4:9", "7:11"));
}

TEST(OpRegistrationCheck, TextInStringsAndCommentsIsNotCode) {
  EXPECT_THAT(positions(R"py(
# @torch.library.custom_op("lib::a")
DOC = """
@torch.library.custom_op("lib::a", mutates_args=())
"""
print(f"{'torch.library.define(\"lib::b\")'}")
)py"),
              IsEmpty());
}

TEST(OpRegistrationCheck, CallsSpanningLinesAndContinuations) {
  EXPECT_THAT(positions("import torch\n@torch.library.custom_op(\n    \"lib::a\",\n"
                        "    mutates_args=(),\n)\ndef a(x): ...\n"
                        "x = torch.library \\\n    .define(\"lib::b\", \"() -> ()\")\n"),
              ElementsAre("2:1", "7:5"));
}

TEST(OpRegistrationCheck, MatmulIsNotADecorator) {
  auto found = diagnostics("y = a @ torch.library.custom_op(\"lib::x\", fn, mutates_args=())\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].location.column, 9u);  // the call, not the `@` operator
}

TEST(OpRegistrationCheck, UnterminatedStringIsReported) {
  auto found = diagnostics("x = 'oops\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].message, "cannot read this Python file: unterminated string");
}

}  // namespace
}  // namespace kernelhub::checks
