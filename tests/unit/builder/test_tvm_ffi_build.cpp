// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include <kernelhub/builder/build_kernel.hpp>
#include <kernelhub/util/file_io.hpp>

#include "../test_support.hpp"

namespace kernelhub::builder {
namespace {

namespace fs = std::filesystem;

// Replays a build without running anything: `ninja` "links" by writing the library file.
class FakeRunner final : public CommandRunner {
 public:
  std::vector<Command> runs;
  std::set<std::string> programs = {"python3", "cmake", "ninja", "c++"};
  std::optional<std::string> probe =
      R"({"tvm_ffi": "0.1.15.post2", "machine": "x86_64", "system": "linux"})";
  std::string library = "_relu_tvm_ffi_cpu_abc1234.so";

  util::Expected<int> run(const Command& command) override {
    runs.push_back(command);
    if (command.argv.front() == "ninja") {
      fs::create_directories(command.argv.at(2));
      std::ofstream(fs::path(command.argv.at(2)) / library) << "not ELF";
    }
    return 0;
  }
  std::optional<std::string> capture(const Command& command) override {
    runs.push_back(command);
    if (command.argv.size() == 2 && command.argv[1] == "--version") {
      return "Cuda compilation tools, release 13.0, V13.0.88";
    }
    if (command.argv.size() == 2 && command.argv[1] == "--list-gpu-arch") {
      return "compute_75\ncompute_80\ncompute_90\n";
    }
    return probe;
  }
  std::optional<fs::path> find_program(const std::string& program) override {
    if (programs.count(program) == 0) {
      return std::nullopt;
    }
    return fs::path("/usr/bin") / program;
  }
};

using kernelhub::testing::write;

void write_kernel() {
  write("k/build.toml", R"([general]
name = "relu-tvm-ffi"
version = 3
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda"]

[tvm-ffi]
src = ["tvm-ffi-ext/binding.cpp"]
pyext = ["py", "json"]

[kernel.relu_cpu]
backend = "cpu"
depends = []
src = ["relu_cpu/relu.cpp"]

[kernel.relu_cuda]
backend = "cuda"
depends = []
src = ["relu_cuda/relu.cu"]
cuda-capabilities = ["8.0", "9.0+PTX"]
)");
  write("k/tvm-ffi-ext/relu_tvm_ffi/__init__.py", "from ._ops import ops\n");
  write("k/tvm-ffi-ext/relu_tvm_ffi/table.json", "{}\n");
  write("k/tvm-ffi-ext/relu_tvm_ffi/notes.txt", "not packaged\n");
}

BuildOptions options_with_id() {
  BuildOptions options;
  options.sandbox = Sandboxing::off;  // the sandbox's own tests turn it on
  options.unique_id = "abc1234";
  options.builder_version = "0.1.0";
  return options;
}

std::set<std::string> files_under(const fs::path& dir) {
  std::set<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) {
      files.insert(entry.path().lexically_relative(dir).generic_string());
    }
  }
  return files;
}

TEST(TvmFfiBuild, CpuVariantHoldsTheLibraryOpsAndMetadata) {
  write_kernel();
  FakeRunner runner;
  util::DiagnosticCollector sink;
  // No nvcc: the cuda backend is skipped, saying so.
  const auto result = build_kernel("k", options_with_id(), runner, sink);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_EQ(result->variants.size(), 1U);
  const auto& built = result->variants[0];
  EXPECT_EQ(built.name, "tvm-ffi01-cpu-x86_64-linux");
  EXPECT_EQ(built.id, "_relu_tvm_ffi_cpu_abc1234");
  ASSERT_EQ(result->skipped.size(), 1U);
  EXPECT_EQ(result->skipped[0].backend, types::Backend::cuda);

  const auto variant = fs::current_path() / "k/build/tvm-ffi01-cpu-x86_64-linux";
  EXPECT_EQ(built.path, variant);
  EXPECT_EQ(files_under(variant),
            (std::set<std::string>{"__init__.py", "_ops.py", "_relu_tvm_ffi_cpu_abc1234.so",
                                   "metadata.json", "table.json"}));
  const auto ops = util::read_file(variant / "_ops.py").value();
  EXPECT_NE(ops.find("tvm_ffi.load_module("), std::string::npos);
  EXPECT_NE(ops.find("_relu_tvm_ffi_cpu_abc1234"), std::string::npos);

  const auto meta = nlohmann::json::parse(util::read_file(variant / "metadata.json").value());
  EXPECT_EQ(meta["id"], "_relu_tvm_ffi_cpu_abc1234");
  EXPECT_EQ(meta["name"], "relu-tvm-ffi");
  EXPECT_EQ(meta["version"], 3);
  EXPECT_EQ(meta["backend"], nlohmann::json({{"type", "cpu"}}));
  EXPECT_TRUE(meta["digest"]["files"].contains("_relu_tvm_ffi_cpu_abc1234.so"));
}

TEST(TvmFfiBuild, ConfiguresWithThePythonThatHasTvmFfi) {
  write_kernel();
  FakeRunner runner;
  util::DiagnosticCollector sink;
  ASSERT_TRUE(build_kernel("k", options_with_id(), runner, sink).has_value());
  const Command* configure = nullptr;
  for (const auto& command : runner.runs) {
    if (command.argv.front() == "cmake") {
      configure = &command;
    }
    // No torch probe: the kernel does not compile against torch.
    for (const auto& arg : command.argv) {
      EXPECT_EQ(arg.find("import torch"), std::string::npos) << arg;
    }
  }
  ASSERT_NE(configure, nullptr);
  const auto work = fs::current_path() / "k/build/.kernelhub/tvm-ffi01-cpu-x86_64-linux";
  EXPECT_EQ(configure->argv.at(2), (work / "project").string());
  EXPECT_EQ(configure->argv.at(4), (work / "cmake").string());
  EXPECT_NE(std::find(configure->argv.begin(), configure->argv.end(),
                      "-DPython_EXECUTABLE=/usr/bin/python3"),
            configure->argv.end());
  EXPECT_TRUE(fs::exists(work / "project/CMakeLists.txt"));
  EXPECT_TRUE(fs::exists(work / "project/tvm-ffi-ext/relu_tvm_ffi/_ops.py"));
}

TEST(TvmFfiBuild, WithoutTvmFfiNothingIsBuiltAndTheReasonSaysWhatToInstall) {
  write_kernel();
  FakeRunner runner;
  runner.probe = std::nullopt;  // `import tvm_ffi` fails
  util::DiagnosticCollector sink;
  const auto result = build_kernel("k", options_with_id(), runner, sink);
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().message.find("cpu: the build's Python cannot import tvm_ffi; install "
                                        "apache-tvm-ffi"),
            std::string::npos)
      << result.error().message;
  EXPECT_FALSE(fs::exists("k/build/tvm-ffi01-cpu-x86_64-linux"));
}

TEST(TvmFfiBuild, CudaVariantIsBuiltWithTheChosenNvcc) {
  write_kernel();
  FakeRunner runner;
  runner.programs.insert("nvcc");
  runner.library = "_relu_tvm_ffi_cuda_abc1234.so";
  auto toml = util::read_file("k/build.toml").value();
  toml.replace(toml.find(R"(["cpu", "cuda"])"), 15, R"(["cuda"])");
  write("k/build.toml", toml);
  util::DiagnosticCollector sink;
  const auto result = build_kernel("k", options_with_id(), runner, sink);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_EQ(result->variants.size(), 1U);
  EXPECT_EQ(result->variants[0].name, "tvm-ffi01-cu130-x86_64-linux");
  const Command* configure = nullptr;
  for (const auto& command : runner.runs) {
    if (command.argv.front() == "cmake") {
      configure = &command;
    }
  }
  ASSERT_NE(configure, nullptr);
  EXPECT_NE(std::find(configure->argv.begin(), configure->argv.end(),
                      "-DCMAKE_CUDA_COMPILER=/usr/bin/nvcc"),
            configure->argv.end());
  const auto variant = fs::current_path() / "k/build/tvm-ffi01-cu130-x86_64-linux";
  const auto meta = nlohmann::json::parse(util::read_file(variant / "metadata.json").value());
  EXPECT_EQ(meta["backend"],
            nlohmann::json({{"type", "cuda"}, {"archs", {"8.0", "9.0+PTX"}}}));
  const auto project = fs::current_path() / "k/build/.kernelhub/tvm-ffi01-cu130-x86_64-linux";
  const auto cmake = util::read_file(project / "project/CMakeLists.txt");
  ASSERT_TRUE(cmake.has_value());
  EXPECT_NE(cmake->find("-gencode=arch=compute_80,code=sm_80"), std::string::npos);
}

}  // namespace
}  // namespace kernelhub::builder
