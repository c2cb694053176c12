// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include <kernelhub/builder/cuda_toolkit.hpp>

namespace kernelhub::builder {
namespace {

namespace fs = std::filesystem;

// Programs that "exist" by full path or by name in PATH, and canned outputs per argv.
class FakeRunner final : public CommandRunner {
 public:
  std::set<std::string> in_path;
  std::set<std::string> files;
  std::map<std::vector<std::string>, std::string> outputs;

  util::Expected<int> run(const Command&) override { return 0; }
  std::optional<std::string> capture(const Command& command) override {
    const auto found = outputs.find(command.argv);
    return found == outputs.end() ? std::nullopt : std::optional(found->second);
  }
  std::optional<fs::path> find_program(const std::string& program) override {
    if (program.find('/') != std::string::npos) {
      return files.count(program) != 0 ? std::optional<fs::path>(program) : std::nullopt;
    }
    return in_path.count(program) != 0 ? std::optional(fs::path("/opt/bin") / program)
                                       : std::nullopt;
  }
};

constexpr const char* k_version = R"(nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2025 NVIDIA Corporation
Cuda compilation tools, release 13.0, V13.0.88
Build cuda_13.0.r13.0/compiler.36424714_0
)";

TEST(CudaToolkit, ReadsTheReleaseLikeCppExtension) {
  EXPECT_EQ(parse_nvcc_version(k_version).value(), types::Version({13, 0}));
  EXPECT_FALSE(parse_nvcc_version("nvcc: something else").has_value());
}

TEST(CudaToolkit, ReadsTheArchListWithoutSuffixedNames) {
  const auto archs = parse_nvcc_arch_list("compute_75\ncompute_80\ncompute_90a\ncompute_100\n"
                                          "compute_121\n");
  EXPECT_EQ(to_strings(archs), (std::vector<std::string>{"7.5", "8.0", "10.0", "12.1"}));
}

TEST(CudaToolkit, LooksInPathThenCudaHomeThenUsrLocal) {
  FakeRunner runner;
  EXPECT_FALSE(find_nvcc(runner, "/opt/cuda").has_value());
  runner.files = {"/usr/local/cuda/bin/nvcc", "/opt/cuda/bin/nvcc"};
  EXPECT_EQ(find_nvcc(runner, std::nullopt).value(), fs::path("/usr/local/cuda/bin/nvcc"));
  EXPECT_EQ(find_nvcc(runner, "/opt/cuda").value(), fs::path("/opt/cuda/bin/nvcc"));
  runner.in_path = {"nvcc"};
  EXPECT_EQ(find_nvcc(runner, "/opt/cuda").value(), fs::path("/opt/bin/nvcc"));
}

TEST(CudaToolkit, DetectsVersionAndArchs) {
  FakeRunner runner;
  EXPECT_FALSE(detect_cuda_toolkit(runner, std::nullopt).value().has_value());
  runner.files = {"/usr/local/cuda/bin/nvcc"};
  runner.outputs[{"/usr/local/cuda/bin/nvcc", "--version"}] = k_version;
  runner.outputs[{"/usr/local/cuda/bin/nvcc", "--list-gpu-arch"}] = "compute_75\ncompute_80\n";
  const auto toolkit = detect_cuda_toolkit(runner, std::nullopt).value();
  ASSERT_TRUE(toolkit.has_value());
  EXPECT_EQ(toolkit->nvcc, fs::path("/usr/local/cuda/bin/nvcc"));
  EXPECT_EQ(toolkit->version, types::Version({13, 0}));
  EXPECT_EQ(to_strings(toolkit->supported), (std::vector<std::string>{"7.5", "8.0"}));
}

TEST(CudaToolkit, AnNvccThatCannotSayItsVersionIsAnError) {
  FakeRunner runner;
  runner.in_path = {"nvcc"};
  const auto toolkit = detect_cuda_toolkit(runner, std::nullopt);
  ASSERT_FALSE(toolkit.has_value());
  EXPECT_EQ(toolkit.error().message,
            "\"/opt/bin/nvcc\" --version failed; is the CUDA toolkit complete?");
}

}  // namespace
}  // namespace kernelhub::builder
