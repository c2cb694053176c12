// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <kernelhub/checks/python_imports_check.hpp>
#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/util/file_io.hpp>

#include "../source_dir.hpp"

namespace kernelhub::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr std::string_view k_imports_build_toml = R"py([general]
name = "my-kernel"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda"]
python-depends = ["einops"]

[general.cuda]
python-depends = ["nvidia-cutlass-dsl"]

[torch-noarch]
)py";

KernelImports kernel() {
  util::DiagnosticCollector sink;
  auto loaded = config::read_build_config(k_imports_build_toml, "build.toml", sink);
  EXPECT_TRUE(loaded.has_value());
  std::filesystem::create_directories("torch-ext/my_kernel/layers");
  std::ofstream("torch-ext/my_kernel/utils.py") << "\n";
  return kernel_imports(loaded->config, "torch-ext/my_kernel");
}

std::vector<util::Diagnostic> check_imports(std::string_view source) {
  util::DiagnosticCollector sink;
  check_python_imports("k.py", source, kernel(), ImportPolicy::builtin(), sink);
  return sink.sorted();
}

std::vector<std::string> lines(std::string_view source) {
  std::vector<std::string> out;
  for (const auto& d : check_imports(source)) {
    if (d.severity == util::Severity::note) {
      continue;  // optional imports allowed
    }
    out.push_back(std::to_string(d.location.line) + ":" + std::to_string(d.location.column));
  }
  return out;
}

TEST(PythonImportsCheck, KernelImportsFromConfigAndPackage) {
  const auto imports = kernel();
  EXPECT_EQ(imports.package, "my_kernel");
  EXPECT_EQ(imports.own_modules, (std::set<std::string>{"_ops", "layers", "utils"}));
  EXPECT_EQ(imports.python_depends,
            (std::map<std::string, std::string>{{"cutlass", "nvidia-cutlass-dsl"},
                                                {"einops", "einops"}}));
}

TEST(PythonImportsCheck, AllowedImportsPass) {
  EXPECT_THAT(lines(R"py(from __future__ import annotations
import os, sys, typing
import importlib.metadata
import torch
import torch.nn.functional as F
from torch.library import custom_op
import triton
import triton.language as tl
from functorch import vmap
import einops
import cutlass.cute as cute
from . import _ops
from .utils import helper
from .layers.norm import RMSNorm
)py"),
              IsEmpty());
}

TEST(PythonImportsCheck, OwnModulesMustBeRelative) {
  auto found = check_imports("import my_kernel\nfrom my_kernel.utils import helper\nimport utils\n"
                     "from _ops import ops\n");
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0].message, "the kernel's own package \"my_kernel\" is imported absolutely");
  EXPECT_THAT(found[0].hint, HasSubstr("relatively"));
  EXPECT_EQ(found[1].location.line, 2u);
  EXPECT_EQ(found[2].message, "the kernel's module \"utils\" is imported absolutely");
  EXPECT_EQ(found[3].hint, "import it relatively: `from ._ops import ...`");
}

TEST(PythonImportsCheck, UndeclaredPackagesAreReportedWithAHint) {
  auto found = check_imports("import numpy as np\n\ndef f():\n    from helion import kernel\n"
                     "    import nki\n");
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].location.line, 1u);
  EXPECT_EQ(found[0].location.column, 1u);
  EXPECT_EQ(found[0].message,
            "\"numpy\" is not in the standard library, torch or its requirements, or the "
            "kernel's python-depends");
  EXPECT_THAT(found[0].hint, HasSubstr("vendor"));
  EXPECT_EQ(found[1].location.column, 5u);
  EXPECT_EQ(found[1].hint, "add \"helion\" to [general] python-depends in build.toml");
  EXPECT_EQ(found[2].hint, "add \"nki\" to [general.neuron] python-depends in build.toml");
}

TEST(PythonImportsCheck, TvmFfiKernelsMayImportTheirFramework) {
  constexpr std::string_view toml = R"(
[general]
name = "my-kernel"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu"]

[tvm-ffi]
src = ["tvm-ffi-ext/binding.cpp"]

[kernel.k]
backend = "cpu"
depends = []
src = ["k.cpp"]
)";
  util::DiagnosticCollector config_sink;
  auto loaded = config::read_build_config(toml, "build.toml", config_sink);
  ASSERT_TRUE(loaded.has_value());
  std::filesystem::create_directories("tvm-ffi-ext/my_kernel");
  util::DiagnosticCollector sink;
  check_python_imports("k.py", "import tvm_ffi\nimport numpy\n",
                       kernel_imports(loaded->config, "tvm-ffi-ext/my_kernel"),
                       ImportPolicy::builtin(), sink);
  const auto found = sink.sorted();
  ASSERT_EQ(found.size(), 1u);  // numpy only: tvm_ffi is the kernel's framework
  EXPECT_THAT(found[0].message, HasSubstr("\"numpy\""));
  // A torch kernel that does not declare tvm-ffi may not import it.
  EXPECT_THAT(lines("import tvm_ffi\n"), ElementsAre("1:1"));
}

TEST(PythonImportsCheck, OptionalAndTypeCheckingImportsAreAllowed) {
  EXPECT_THAT(lines(R"py(from typing import TYPE_CHECKING
try:
    import numpy
except ImportError:
    numpy = None
    import scipy
if TYPE_CHECKING:
    import pandas
else:
    import sklearn
)py"),
              ElementsAre("6:5", "10:5"));
}

TEST(PythonImportsCheck, TheLoadersGetKernelDepIsAllowed) {
  // The reference's idiom for a kernel with kernel-depends, and ours.
  EXPECT_THAT(lines("from kernels import get_kernel_dep\n"
                    "from kernelhub import get_kernel_dep as dep\n"
                    "import kernels\nimport kernelhub\n"
                    "def f():\n    from kernels.deps import get_kernel_dep\n"),
              IsEmpty());
}

TEST(PythonImportsCheck, OtherLoaderNamesPointAtKernelDepends) {
  auto found = check_imports("from kernels import get_kernel_dep, get_kernel\n"
                     "from kernelhub import has_kernel\n");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].message,
            "a kernel may import only \"get_kernel_dep\" from the loader \"kernels\", not "
            "\"get_kernel\"");
  EXPECT_THAT(found[0].hint, HasSubstr("kernel-depends"));
  EXPECT_EQ(found[1].location.line, 2u);
  EXPECT_THAT(found[1].message, HasSubstr("\"kernelhub\", not \"has_kernel\""));
}

TEST(PythonImportsCheck, ImportsUnderAnAvailabilityFlagAreOptional) {
  // The reference's relu-tvm-ffi: jax and its tvm-ffi bridge only where jax is installed.
  EXPECT_THAT(lines(R"py(try:
    import jax
    _HAS_JAX = True
except ImportError:
    _HAS_JAX = False

if _HAS_JAX:
    import jax_tvm_ffi
    from jax import numpy as jnp

def to_jax(x):
    if not _HAS_JAX:
        raise RuntimeError("needs jax")
    else:
        import jax.dlpack
    return x

try:
    import scipy
except ModuleNotFoundError:
    scipy = None
if scipy is not None:
    import scipy.special
from importlib.util import find_spec
HAS_NUMBA = find_spec("numba") is not None
if HAS_NUMBA:
    import numba
if True:
    import pandas
)py"),
              ElementsAre("29:5"));  // an `if` on no flag guards nothing
}

constexpr std::string_view k_tvm_ffi_toml = R"(
[general]
name = "my-kernel"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu"]

[tvm-ffi]
src = ["tvm-ffi-ext/binding.cpp"]

[kernel.k]
backend = "cpu"
depends = []
src = ["k.cpp"]
)";

// Diagnostics of `source` in a [tvm-ffi] kernel (tvm == true) or the torch kernel above.
std::vector<util::Diagnostic> check_in(std::string_view source, bool tvm) {
  util::DiagnosticCollector config_sink;
  auto loaded = config::read_build_config(tvm ? k_tvm_ffi_toml : k_imports_build_toml, "build.toml",
                                          config_sink);
  EXPECT_TRUE(loaded.has_value());
  const std::string package = tvm ? "tvm-ffi-ext/my_kernel" : "torch-ext/my_kernel";
  std::filesystem::create_directories(package);
  util::DiagnosticCollector sink;
  check_python_imports("k.py", source, kernel_imports(loaded->config, package),
                       ImportPolicy::builtin(), sink);
  return sink.sorted();
}

std::vector<std::string> errors_in(std::string_view source, bool tvm) {
  std::vector<std::string> out;
  for (const auto& d : check_in(source, tvm)) {
    if (d.severity != util::Severity::note) {
      out.push_back(std::to_string(d.location.line) + ":" + std::to_string(d.location.column));
    }
  }
  return out;
}

// The reference's relu-tvm-ffi (issue 13 item 5): has_jax comes from the generated _ops, JAX's
// registration sits under `if has_jax:`, and relu_jax imports jax after raising without it.
constexpr std::string_view k_reference_shape = R"py(import tvm_ffi
from ._ops import has_jax, jax_add_ffi_target_name_prefix, ops

if has_jax:
    from jax_tvm_ffi import register_ffi_target

def relu_jax(x):
    if not has_jax:
        raise RuntimeError("JAX is not available")

    import jax.ffi
    return jax.ffi.ffi_call(jax_add_ffi_target_name_prefix("relu"), x)
)py";

TEST(PythonImportsCheck, TheReferenceTvmFfiShapeIsOptional) {
  const auto found = check_in(k_reference_shape, true);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].severity, util::Severity::note);
  EXPECT_EQ(found[0].message,
            "optional import of \"jax_tvm_ffi\" allowed: it is under a condition on "
            "\"has_jax\", set by an availability check");
  EXPECT_EQ(found[1].severity, util::Severity::note);
  EXPECT_EQ(found[1].location.line, 11u);
  EXPECT_EQ(found[1].message,
            "optional import of \"jax\" allowed: it is after an early exit on \"has_jax\", set "
            "by an availability check");
  // A torch kernel's _ops defines no has_jax: the same imports are errors there.
  EXPECT_THAT(errors_in(k_reference_shape, false), ElementsAre("1:1", "5:5", "11:5"));
}

TEST(PythonImportsCheck, FlagsImportedFromTheKernelsOwnModules) {
  std::filesystem::create_directories("tvm-ffi-ext/my_kernel/layers");
  std::ofstream("tvm-ffi-ext/my_kernel/compat.py")
      << "try:\n    import jax\n    JAX_OK = True\nexcept ImportError:\n    JAX_OK = False\n";
  EXPECT_THAT(errors_in("from .compat import JAX_OK as ok\nfrom .._ops import has_jax\n"
                        "from .compat import other\n"
                        "if ok:\n    import jax\n"
                        "if has_jax:\n    import jax_tvm_ffi\n"
                        "if other:\n    import numpy\n",
                        true),
              ElementsAre("9:5"));  // `other` is no flag of compat
  std::filesystem::remove("tvm-ffi-ext/my_kernel/compat.py");
}

TEST(PythonImportsCheck, AnEarlyExitGuardsOnlyTheRestOfItsFunction) {
  EXPECT_THAT(errors_in(R"py(from ._ops import has_jax

if not has_jax:
    raise ImportError("needs jax")
import jax

def f():
    if not has_jax:
        return None
    import jax
    if True:
        import jax.numpy
    return jax

def g():
    import jax

def h():
    if not has_jax:
        print("no jax")
    import jax

def i():
    if not has_jax:
        raise RuntimeError("no jax")
    else:
        pass
    import jax

def j():
    if has_jax: return 1
    import numpy
)py",
                        true),
              // module level (5), another function (16), no exit (21), an else branch (28);
              // line 32's early exit is on has_jax, so numpy after it is optional
              ElementsAre("5:1", "16:5", "21:5", "28:5"));
}

TEST(PythonImportsCheck, TvmFfiOpsFlagsAreTheTemplates) {
  const auto text = util::read_file(kernelhub::unit_tests::source_dir() /
                                    "templates/project/tvm_ffi/_ops.py");
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(availability_flags(*text), k_tvm_ffi_ops_flags);
}

TEST(PythonImportsCheck, OptionalImportsAreNotes) {
  const auto found = check_imports("try:\n    import jax\nexcept ImportError:\n    jax = None\n"
                           "if jax:\n    import jax_tvm_ffi\n");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].severity, util::Severity::note);
  EXPECT_EQ(found[0].message, "optional import of \"jax\" allowed: it is inside try/except");
  EXPECT_EQ(found[1].severity, util::Severity::note);
  EXPECT_EQ(found[1].message,
            "optional import of \"jax_tvm_ffi\" allowed: it is under a condition on \"jax\", "
            "set by an availability check");
}

TEST(PythonImportsCheck, StringsAndCommentsAreNotImports) {
  EXPECT_THAT(lines("# import numpy\ns = \"\"\"\nimport numpy\n\"\"\"\n"), IsEmpty());
}

TEST(ImportPolicy, BuiltinHasTheStandardLibraryAndTorchRequirements) {
  const auto& policy = ImportPolicy::builtin();
  EXPECT_TRUE(policy.is_stdlib("os"));
  EXPECT_TRUE(policy.is_stdlib("__future__"));
  EXPECT_FALSE(policy.is_stdlib("torch"));
  EXPECT_TRUE(policy.comes_with_torch("torch"));
  EXPECT_TRUE(policy.comes_with_torch("triton"));
  EXPECT_TRUE(policy.comes_with_torch("typing_extensions"));
  EXPECT_FALSE(policy.comes_with_torch("numpy"));  // optional for torch: not a requirement
}

TEST(ImportPolicy, ParseErrorsNameTheFile) {
  auto parsed = ImportPolicy::parse("{\"stdlib\": []}");
  ASSERT_FALSE(parsed);
  EXPECT_THAT(parsed.error().message, HasSubstr("python_imports.json"));
}

}  // namespace
}  // namespace kernelhub::checks
