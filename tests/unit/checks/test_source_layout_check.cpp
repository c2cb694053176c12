// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <kernelhub/checks/kernel_checks.hpp>
#include <kernelhub/checks/source_layout_check.hpp>
#include <kernelhub/config/build_config_reader.hpp>

namespace kernelhub::checks {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr std::string_view k_build_toml = R"([general]
name = "relu"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu"]

[torch]
src = ["torch-ext/torch_binding.cpp", "torch-ext/missing.h"]

[kernel.relu_cpu]
backend = "cpu"
depends = ["torch"]
include = ["relu_cpu", "nowhere"]
src = ["relu_cpu/relu.cpp"]
)";

void touch(const fs::path& path) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << "\n";
}

config::LoadedBuildConfig load() {
  util::DiagnosticCollector sink;
  auto loaded = config::read_build_config(k_build_toml, "build.toml", sink);
  EXPECT_TRUE(loaded.has_value());
  return *loaded;
}

TEST(SourceLayoutCheck, AGoodLayoutPasses) {
  touch("k/torch-ext/relu/__init__.py");
  touch("k/torch-ext/torch_binding.cpp");
  touch("k/torch-ext/missing.h");
  touch("k/relu_cpu/relu.cpp");
  fs::create_directories("k/nowhere");
  util::DiagnosticCollector sink;
  check_source_layout("k", load(), sink);
  EXPECT_THAT(sink.sorted(), IsEmpty());
}

TEST(SourceLayoutCheck, EveryProblemIsReported) {
  touch("torch-ext/torch_binding.cpp");
  touch("relu_cpu/relu.cpp");
  touch("torch-ext/relu/relu/__init__.py");  // the old nested layout, and no __init__.py
  touch("torch-ext/relu/_relu_abc.abi3.so");
  fs::create_directories("torch-ext/relu/build/lib");
  util::DiagnosticCollector sink;
  check_source_layout(".", load(), sink);
  std::vector<std::string> messages;
  for (const auto& d : sink.sorted()) {
    messages.push_back(d.location.file + ":" + std::to_string(d.location.line) + ": " +
                       d.message);
  }
  EXPECT_THAT(
      messages,
      ElementsAre(
          "build.toml:9: source file \"torch-ext/missing.h\" listed in torch.src does not "
          "exist",
          "build.toml:14: include folder \"nowhere\" listed in kernel.relu_cpu.include does "
          "not exist",
          "torch-ext/relu:0: the kernel's Python package \"torch-ext/relu\" must contain "
          "__init__.py",
          "torch-ext/relu/_relu_abc.abi3.so:0: \"torch-ext/relu/_relu_abc.abi3.so\" is a "
          "compiled library inside the Python package",
          "torch-ext/relu/build:0: \"torch-ext/relu/build\" is a build folder inside the Python "
          "package",
          "torch-ext/relu/relu:0: \"torch-ext/relu/relu\" must not exist (the old nested "
          "layout)"));
}

TEST(SourceLayoutCheck, PathsAreShownFromTheGivenFolder) {
  touch("kernels/relu/torch-ext/torch_binding.cpp");
  util::DiagnosticCollector sink;
  run_source_check(SourceCheck::layout, "kernels/relu", load(), sink);
  ASSERT_FALSE(sink.sorted().empty());
  std::vector<std::string> files;
  for (const auto& d : sink.sorted()) {
    files.push_back(d.location.file);
  }
  EXPECT_THAT(files, ::testing::Contains("kernels/relu/torch-ext/relu"));
  EXPECT_THAT(files, ::testing::Contains("build.toml"));  // as the reader named it
}

TEST(KernelChecks, PythonFilesOfThePackage) {
  touch("torch-ext/relu/__init__.py");
  touch("torch-ext/relu/layers/norm.py");
  touch("torch-ext/relu/__pycache__/x.py");
  touch("torch-ext/relu/data.json");
  touch("torch-ext/other.py");
  EXPECT_THAT(kernel_python_files(".", load().config),
              ElementsAre("torch-ext/relu/__init__.py", "torch-ext/relu/layers/norm.py"));
}

}  // namespace
}  // namespace kernelhub::checks
