// SPDX-License-Identifier: Apache-2.0
// The cuda side of the generated CMake project: what the builder's cuda plan turns into.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include <kernelhub/builder/cuda_arch.hpp>
#include <kernelhub/codegen/create_project.hpp>
#include <kernelhub/config/build_config_reader.hpp>

#include "../config/reader_test_support.hpp"

namespace kernelhub::builder {
namespace {

using config::testing::parse_config;

constexpr std::string_view k_two_cuda_kernels = R"([general]
name = "relu"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu", "cuda"]

[torch]
src = ["torch-ext/torch_binding.cpp"]

[kernel.relu_cpu]
backend = "cpu"
depends = ["torch"]
src = ["relu_cpu/relu.cpp"]

[kernel.relu_cuda]
backend = "cuda"
depends = ["torch"]
src = ["relu_cuda/relu.cu"]

[kernel.relu_new]
backend = "cuda"
depends = ["torch"]
src = ["relu_new/relu.cu"]
cuda-minver = "14.0"
)";

std::string cmake_lists(types::Backend backend, const codegen::CudaProjectOptions* cuda) {
  const auto files =
      codegen::create_project(parse_config(k_two_cuda_kernels), "/k", "abc1234", backend, cuda);
  EXPECT_TRUE(files.has_value()) << files.error().message;
  const auto* file = files ? files->find("CMakeLists.txt") : nullptr;
  return file != nullptr ? file->content : std::string();
}

TEST(CudaProject, EachKernelSourceGetsItsGencodeFlagsForCudaOnly) {
  codegen::CudaProjectOptions options;
  options.kernel_flags["relu_cuda"] =
      gencode_flags(parse_cuda_archs({"8.0", "9.0+PTX"}).value());
  const auto text = cmake_lists(types::Backend::cuda, &options);
  EXPECT_NE(text.find("enable_language(CUDA)"), std::string::npos);
  // Torch's CMake package is not used (seconds of configuring): the project links torch's
  // CUDA libraries by path, as the cpu project links its CPU ones.
  EXPECT_EQ(text.find("find_package(Torch"), std::string::npos);
  EXPECT_NE(text.find("c10_cuda torch_cuda"), std::string::npos);
  EXPECT_NE(text.find("--expt-extended-lambda"), std::string::npos);
  EXPECT_NE(text.find("set_property(SOURCE \"/k/relu_cuda/relu.cu\" APPEND PROPERTY "
                      "COMPILE_OPTIONS \"\\$<\\$<COMPILE_LANGUAGE:CUDA>:-gencode=arch=compute_80,"
                      "code=sm_80>;\\$<\\$<COMPILE_LANGUAGE:CUDA>:-gencode=arch=compute_90,code="
                      "sm_90>;\\$<\\$<COMPILE_LANGUAGE:CUDA>:-gencode=arch=compute_90,code="
                      "compute_90>\")"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("-Xcompiler=-fno-gnu-unique"), std::string::npos);
  EXPECT_NE(text.find("-Xcompiler=-fvisibility=hidden"), std::string::npos);
  EXPECT_NE(text.find("CUDA_RUNTIME_LIBRARY Shared"), std::string::npos);
  // relu_new is not in the plan (cuda-minver): not compiled at all.
  EXPECT_EQ(text.find("relu_new"), std::string::npos);
  EXPECT_EQ(text.find("relu_cpu"), std::string::npos);
}

TEST(CudaProject, TheCpuProjectKnowsNoCuda) {
  const auto text = cmake_lists(types::Backend::cpu, nullptr);
  EXPECT_EQ(text.find("enable_language(CUDA)"), std::string::npos);
  EXPECT_EQ(text.find("COMPILE_LANGUAGE:CUDA"), std::string::npos);
  EXPECT_NE(text.find("relu_cpu"), std::string::npos);
}

}  // namespace
}  // namespace kernelhub::builder
