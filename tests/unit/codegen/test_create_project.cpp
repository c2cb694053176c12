// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include <kernelhub/codegen/create_project.hpp>
#include <kernelhub/config/build_config_reader.hpp>

#include "../config/reader_test_support.hpp"

namespace kernelhub::codegen {
namespace {

using config::testing::parse_config;

constexpr std::string_view k_relu = R"([general]
name = "relu-op"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda"]

[torch]
src = ["torch-ext/torch_binding.cpp", "torch-ext/torch_binding.h"]
include = ["common"]
cxx-flags = ["-O3", "-DRELU_FAST"]

[kernel.relu_cpu]
backend = "cpu"
depends = ["torch"]
src = ["relu_cpu/relu.cpp"]
include = ["relu_cpu/inc"]
cxx-flags = ["-march=native"]

[kernel.relu_cuda]
backend = "cuda"
depends = ["torch"]
src = ["relu_cuda/relu.cu"]
)";

const std::string& content(const FileSet& files, std::string_view path) {
  static const std::string missing = "<missing>";
  const auto* file = files.find(path);
  return file == nullptr ? missing : file->content;
}

bool contains(const std::string& text, std::string_view needle) {
  return text.find(needle) != std::string::npos;
}

TEST(CreateProject, TorchProjectHasCMakeRegistrationAndOps) {
  const auto files = create_project(parse_config(k_relu), "/src/relu", "abc1234");
  ASSERT_TRUE(files.has_value()) << files.error().message;
  std::vector<std::string> paths;
  for (const auto& file : files->files()) {
    paths.push_back(file.path);
  }
  EXPECT_EQ(paths, (std::vector<std::string>{"CMakeLists.txt", "compat/compiler_cache.cmake",
                                             "compat/glibc_compat.cpp",
                                             "compat/glibc_pins.h", "compat/libstdcxx.cmake",
                                             "compat/reproducible.cmake",
                                             "compat/stdcxx_nonshared.py",
                                             "torch-ext/kernelhub_ops_name.h",
                                             "torch-ext/registration.h",
                                             "torch-ext/relu_op/_ops.py"}));
}

TEST(CreateProject, CompatFilesMakeTheModuleMeetManylinux228) {
  // docs/build.md: glibc pins forced into every source the compilers see (nvcc's .cu files
  // too: torch's stable-ABI headers call dlsym), a private __libc_single_threaded
  // and the nonshared archive of newer libstdc++ objects, linked before the shared one.
  const auto files = create_project(parse_config(k_relu), "/src/relu", "abc1234");
  ASSERT_TRUE(files.has_value()) << files.error().message;
  const auto& cmake = content(*files, "CMakeLists.txt");
  EXPECT_TRUE(contains(cmake, "$<$<COMPILE_LANGUAGE:C,CXX,OBJC,OBJCXX,HIP,CUDA>:-include;"
                              "${CMAKE_CURRENT_SOURCE_DIR}/compat/glibc_pins.h>"));
  EXPECT_TRUE(contains(cmake, "\"${CMAKE_CURRENT_SOURCE_DIR}/compat/glibc_compat.cpp\""));
  // libstdc++'s linking lives in compat/libstdcxx.cmake, shared with the tvm-ffi project.
  EXPECT_TRUE(contains(cmake, "kernelhub_link_libstdcxx(${OPS_NAME})"));
  const auto& libstdcxx = content(*files, "compat/libstdcxx.cmake");
  EXPECT_TRUE(contains(libstdcxx, "compat/stdcxx_nonshared.py"));
  EXPECT_TRUE(contains(libstdcxx, "-Wl,--exclude-libs,libkernelhub_stdcxx_nonshared.a"));
  const auto& pins = content(*files, "compat/glibc_pins.h");
  EXPECT_TRUE(contains(pins, "KERNELHUB_GLIBC_PIN(pthread_create, \"2.2.5\", \"2.17\")"));
  EXPECT_TRUE(contains(pins, "#undef _GLIBCXX_USE_PTHREAD_COND_CLOCKWAIT"));
  // Device passes see none of it.
  EXPECT_TRUE(contains(pins, "!defined(__CUDA_ARCH__)"));
  EXPECT_FALSE(contains(pins, "totalorder")) << "its signature changed at 2.31";
  EXPECT_TRUE(contains(content(*files, "compat/glibc_compat.cpp"),
                       "__attribute__((visibility(\"hidden\"))) char __libc_single_threaded = 0;"));
  EXPECT_TRUE(contains(content(*files, "compat/stdcxx_nonshared.py"), "--localize-symbols="));
}

TEST(CreateProject, CMakeListsBuildsAnAbi3ModuleFromTheBackendsSources) {
  const auto files = create_project(parse_config(k_relu), "/src/relu", "abc1234");
  ASSERT_TRUE(files.has_value()) << files.error().message;
  const auto& cmake = content(*files, "CMakeLists.txt");
  // The target is named without the unique part: the file is the same for every id.
  EXPECT_TRUE(contains(cmake, "set(OPS_NAME \"_relu_op_cpu\")"));
  EXPECT_FALSE(contains(cmake, "abc1234"));
  EXPECT_TRUE(contains(cmake, "set(CMAKE_EXPORT_COMPILE_COMMANDS ON)"));
  // A cpu build: torch located without importing it, its CPU libraries only, not its CMake
  // package (which would turn on CUDA and link libtorch_cuda.so for a CUDA torch).
  EXPECT_TRUE(contains(cmake, "find_spec('torch')"));
  EXPECT_FALSE(contains(cmake, "import torch"));
  EXPECT_FALSE(contains(cmake, "find_package(Torch"));
  EXPECT_TRUE(contains(cmake, "foreach(library c10 torch_cpu torch)"));
  EXPECT_TRUE(contains(cmake, "\"/src/relu/torch-ext/torch_binding.cpp\""));
  EXPECT_TRUE(contains(cmake, "\"/src/relu/relu_cpu/relu.cpp\""));
  EXPECT_FALSE(contains(cmake, "relu.cu")) << "the cuda kernel is not part of a cpu build";
  EXPECT_TRUE(contains(cmake, "${relu_cpu_SRC}"));
  EXPECT_TRUE(contains(cmake, "SUFFIX \".abi3.so\""));
  EXPECT_TRUE(contains(cmake, "PREFIX \"\""));
  EXPECT_TRUE(contains(cmake, "Py_LIMITED_API=0x03090000"));
  EXPECT_FALSE(contains(cmake, "TORCH_EXTENSION_NAME=")) << "not a define of every source";
  EXPECT_TRUE(contains(cmake, "CPU_KERNEL"));
  EXPECT_TRUE(contains(cmake, "-fno-gnu-unique"));
  EXPECT_TRUE(contains(cmake, "CXX_VISIBILITY_PRESET hidden"));
  EXPECT_TRUE(contains(cmake, "\"/src/relu/common\""));
  EXPECT_TRUE(contains(cmake, "$<$<COMPILE_LANGUAGE:CXX>:-O3;-DRELU_FAST>"));
  EXPECT_TRUE(contains(cmake, "INCLUDE_DIRECTORIES \"/src/relu/relu_cpu/inc\""));
  EXPECT_TRUE(contains(cmake, "$<$<COMPILE_LANGUAGE:CXX>:-march=native>"));
}

TEST(CreateProject, OpsModuleImportsTheNativeModuleAndItsNamespace) {
  const auto files = create_project(parse_config(k_relu), "/src/relu", "abc1234_dirty");
  ASSERT_TRUE(files.has_value()) << files.error().message;
  const auto& ops = content(*files, "torch-ext/relu_op/_ops.py");
  EXPECT_TRUE(contains(ops, "from . import _relu_op_cpu_abc1234_dirty\n"));
  EXPECT_TRUE(contains(ops, "ops = torch.ops._relu_op_cpu_abc1234_dirty\n"));
  EXPECT_TRUE(contains(ops, "return f\"_relu_op_cpu_abc1234_dirty::{op_name}\""));
}

TEST(CreateProject, RegistrationHeaderExpandsTheNameMacro) {
  const auto files = create_project(parse_config(k_relu), "/src/relu", "abc1234");
  ASSERT_TRUE(files.has_value()) << files.error().message;
  const auto& header = content(*files, "torch-ext/registration.h");
  for (const auto* macro :
       {"#define TORCH_LIBRARY_EXPAND(NAME, MODULE)", "#define TORCH_LIBRARY_IMPL_EXPAND(",
        "#define STABLE_TORCH_LIBRARY_EXPAND(", "#define STABLE_TORCH_LIBRARY_IMPL_EXPAND(",
        "#define REGISTER_EXTENSION(NAME)", "PyModule_Create", "#include <Python.h>"}) {
    EXPECT_TRUE(contains(header, macro)) << macro;
  }
}

TEST(CreateProject, OnlyTheOpsNameHeaderNamesTheId) {
  const auto files = create_project(parse_config(k_relu), "/src/relu", "abc1234");
  ASSERT_TRUE(files.has_value()) << files.error().message;
  EXPECT_TRUE(contains(content(*files, "torch-ext/kernelhub_ops_name.h"),
                       "#define TORCH_EXTENSION_NAME _relu_op_cpu_abc1234\n"));
  EXPECT_TRUE(contains(content(*files, "torch-ext/registration.h"),
                       "#include \"kernelhub_ops_name.h\""));
  const auto other = create_project(parse_config(k_relu), "/src/relu", "def5678");
  ASSERT_TRUE(other.has_value());
  for (const auto& file : files->files()) {
    if (file.path != "torch-ext/kernelhub_ops_name.h" && file.path != "torch-ext/relu_op/_ops.py") {
      EXPECT_EQ(file.content, content(*other, file.path)) << file.path << " depends on the id";
    }
  }
}

// The ops-name header is forced (-include) into the listed sources whose text names
// TORCH_EXTENSION_NAME, and only those.
std::vector<std::string> included_sources(const std::string& cmake) {
  std::vector<std::string> sources;
  const std::string prefix = "set_property(SOURCE \"";
  for (auto at = cmake.find(prefix); at != std::string::npos; at = cmake.find(prefix, at + 1)) {
    const auto end = cmake.find('"', at + prefix.size());
    const auto line_end = cmake.find("kernelhub_ops_name.h", end);
    if (line_end != std::string::npos && line_end - end < 160) {
      sources.push_back(cmake.substr(at + prefix.size(), end - at - prefix.size()));
    }
  }
  return sources;
}

TEST(CreateProject, OnlySourcesThatNameTheNamespaceGetTheOpsNameHeader) {
  const SourceReader reader = [](const std::filesystem::path& path) -> std::optional<std::string> {
    if (path == "/src/relu/torch-ext/torch_binding.cpp") {
      return "TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {}";
    }
    return "void relu();";
  };
  const auto files =
      create_project(parse_config(k_relu), "/src/relu", "abc1234", types::Backend::cpu, nullptr,
                     reader);
  ASSERT_TRUE(files.has_value()) << files.error().message;
  EXPECT_EQ(included_sources(content(*files, "CMakeLists.txt")),
            (std::vector<std::string>{"/src/relu/torch-ext/torch_binding.cpp"}));
}

TEST(CreateProject, AHeaderOrAnUnreadableSourceThatMayNameTheNamespaceGivesItToEverySource) {
  const auto config = parse_config(k_relu);
  const std::vector<std::string> every{"/src/relu/torch-ext/torch_binding.cpp",
                                       "/src/relu/relu_cpu/relu.cpp"};
  const SourceReader header = [](const std::filesystem::path& path) -> std::optional<std::string> {
    if (path == "/src/relu/torch-ext/torch_binding.h") {
      return "#define MY_NS TORCH_EXTENSION_NAME";
    }
    return "int x;";
  };
  const auto with_header =
      create_project(config, "/src/relu", "abc1234", types::Backend::cpu, nullptr, header);
  ASSERT_TRUE(with_header.has_value());
  EXPECT_EQ(included_sources(content(*with_header, "CMakeLists.txt")), every);

  const SourceReader unreadable = [](const std::filesystem::path& path) -> std::optional<std::string> {
    if (path == "/src/relu/relu_cpu/relu.cpp") {
      return std::nullopt;
    }
    return "int x;";
  };
  const auto with_unreadable =
      create_project(config, "/src/relu", "abc1234", types::Backend::cpu, nullptr, unreadable);
  ASSERT_TRUE(with_unreadable.has_value());
  EXPECT_EQ(included_sources(content(*with_unreadable, "CMakeLists.txt")),
            (std::vector<std::string>{"/src/relu/relu_cpu/relu.cpp"}));

  // Without a reader nothing is known of the sources.
  const auto without = create_project(config, "/src/relu", "abc1234");
  ASSERT_TRUE(without.has_value());
  EXPECT_EQ(included_sources(content(*without, "CMakeLists.txt")), every);
}

TEST(CreateProject, NoarchProjectIsTheRuntimeBackendOps) {
  const auto files = create_project(parse_config(R"([general]
name = "silu-and-mul"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda"]

[torch-noarch]
)"),
                                    "/src/silu", "abc1234");
  ASSERT_TRUE(files.has_value()) << files.error().message;
  ASSERT_EQ(files->files().size(), 1U);
  const auto& ops = content(*files, "torch-ext/silu_and_mul/_ops.py");
  EXPECT_TRUE(contains(ops, "_OPS_NAME = f\"_silu_and_mul_{get_backend()}_abc1234\"\n"));
  EXPECT_TRUE(contains(ops, "ops = getattr(torch.ops, _OPS_NAME)"));
  EXPECT_TRUE(contains(ops, "def add_op_namespace_prefix(op_name: str) -> str:"));
}

TEST(CreateProject, RejectsAUniqueIdThatSpoilsTheIdentifier) {
  const auto files = create_project(parse_config(k_relu), "/src/relu", "a-b");
  ASSERT_FALSE(files.has_value());
  EXPECT_TRUE(contains(files.error().message, "not a valid Python identifier"));
}

TEST(CreateProject, QuotesPathsForCMake) {
  EXPECT_EQ(cmake_quote(R"(/a b/"c"/$x\y)"), R"("/a b/\"c\"/\$x\\y")");
  const auto files = create_project(parse_config(k_relu), "/my dir/$relu", "abc1234");
  ASSERT_TRUE(files.has_value()) << files.error().message;
  EXPECT_TRUE(
      contains(content(*files, "CMakeLists.txt"), "\"/my dir/\\$relu/relu_cpu/relu.cpp\""));
}

TEST(PythonPackaging, NamesTheCompiledModuleAndTheKernelsPackage) {
  const auto config = parse_config(k_relu);
  auto files = create_project(config, "/src/relu-op", "u1", types::Backend::cpu);
  ASSERT_TRUE(files.has_value());
  ASSERT_TRUE(add_python_packaging(*files, config, "/src/relu-op", "u1", types::Backend::cpu));
  const auto& setup = content(*files, "setup.py");
  EXPECT_NE(setup.find("PACKAGE = \"relu_op\"\n"), std::string::npos) << setup;
  EXPECT_NE(setup.find("KERNEL_PACKAGE = Path(\"/src/relu-op/torch-ext/relu_op\")\n"),
            std::string::npos)
      << setup;
  EXPECT_NE(setup.find("OPS_NAME = \"_relu_op_cpu_u1\"\n"), std::string::npos) << setup;
  EXPECT_NE(setup.find("MODULE_FILE = \"_relu_op_cpu.abi3.so\"\n"), std::string::npos) << setup;
  const auto& pyproject = content(*files, "pyproject.toml");
  EXPECT_NE(pyproject.find("name = \"relu-op\"\nversion = \"1\"\n"), std::string::npos)
      << pyproject;
}

TEST(PythonPackaging, ANoarchProjectCompilesNothing) {
  const auto config = parse_config(R"([general]
name = "pick"
version = 3
edition = 5
license = "Apache-2.0"
backends = ["cpu"]

[torch-noarch]
)");
  auto files = create_project(config, "/src/pick", "u1", types::Backend::cpu);
  ASSERT_TRUE(files.has_value());
  ASSERT_TRUE(add_python_packaging(*files, config, "/src/pick", "u1", types::Backend::cpu));
  EXPECT_NE(content(*files, "setup.py").find("OPS_NAME = \"\"\n"), std::string::npos);
  EXPECT_NE(content(*files, "pyproject.toml").find("version = \"3\""), std::string::npos);
}

}  // namespace
}  // namespace kernelhub::codegen
