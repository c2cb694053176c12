// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include <kernelhub/builder/tvm_ffi.hpp>
#include <kernelhub/builder/tvm_ffi_environment.hpp>
#include <kernelhub/builder/tvm_ffi_project.hpp>
#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/variants/variant_name.hpp>

#include "../config/reader_test_support.hpp"

namespace kernelhub::builder {
namespace {

using types::Backend;

using config::testing::parse_config;

std::string tvm_kernel(std::string_view backends, std::string_view extra = "") {
  return std::string(R"([general]
name = "relu-tvm-ffi"
version = 1
edition = 5
license = "Apache-2.0"
backends = )") + std::string(backends) + R"(

[tvm-ffi]
src = ["tvm-ffi-ext/binding.cpp"]
include = ["include"]
cxx-flags = ["-DCANARY"]

[kernel.relu_cpu]
backend = "cpu"
depends = []
src = ["relu_cpu/relu.cpp"]
cxx-flags = ["-O3"]

[kernel.relu_cuda]
backend = "cuda"
depends = []
src = ["relu_cuda/relu.cu"]
cuda-capabilities = ["8.0", "9.0+PTX"]
)" + std::string(extra);
}

TvmFfiEnvironment tvm_ffi_01() {
  return parse_tvm_ffi_probe(R"({"tvm_ffi": "0.1.15.post2", "machine": "x86_64",
                                 "system": "linux"})")
      .value();
}

HostTools host_with_tvm_ffi() {
  HostTools host;
  host.tvm_ffi = tvm_ffi_01();
  return host;
}

CudaToolkit toolkit_13_0() {
  CudaToolkit toolkit;
  toolkit.nvcc = "/usr/local/cuda/bin/nvcc";
  toolkit.version = types::Version::parse("13.0").value();
  return toolkit;
}

TEST(TvmFfiProbe, ReadsMajorMinorAndThePlatform) {
  const auto env = tvm_ffi_01();
  EXPECT_EQ(env.version.to_string(), "0.1");
  EXPECT_EQ(env.cpu, "x86_64");
  EXPECT_EQ(env.os, "linux");
  // Output printed while importing comes before the JSON line.
  const auto noisy = parse_tvm_ffi_probe(
      "loading...\n{\"tvm_ffi\": \"0.12.0\", \"machine\": \"arm64\", \"system\": \"darwin\"}\n");
  ASSERT_TRUE(noisy.has_value()) << noisy.error().message;
  EXPECT_EQ(noisy->version.to_string(), "0.12");
  EXPECT_EQ(noisy->cpu, "aarch64");
}

TEST(TvmFfiProbe, ErrorsNameWhatIsWrong) {
  EXPECT_EQ(parse_tvm_ffi_probe("nope").error().message,
            "the tvm-ffi probe printed no JSON object");
  EXPECT_EQ(parse_tvm_ffi_probe(R"({"machine": "x86_64", "system": "linux"})").error().message,
            "the tvm-ffi probe did not report tvm_ffi.__version__");
  EXPECT_EQ(parse_tvm_ffi_probe(R"({"tvm_ffi": "dev", "machine": "x86_64", "system": "linux"})")
                .error()
                .message,
            "cannot read tvm-ffi version \"dev\"");
}

TEST(TvmFfiVariantName, MatchesTheReferenceNamingAndParsesBack) {
  const auto env = tvm_ffi_01();
  EXPECT_EQ(tvm_ffi_variant_name(env, Backend::cpu), "tvm-ffi01-cpu-x86_64-linux");
  EXPECT_EQ(tvm_ffi_variant_name(env, Backend::cuda, types::Version::parse("12.6").value()),
            "tvm-ffi01-cu126-x86_64-linux");
  const auto parsed = variants::parse_variant("tvm-ffi01-cu130-x86_64-linux").value();
  EXPECT_EQ(parsed.framework, variants::Framework::tvm_ffi);
  EXPECT_EQ(tvm_ffi_variant_name(env, Backend::cuda, types::Version::parse("13.0").value()),
            variants::to_string(parsed));
}

TEST(TvmFfiPlan, CpuIsPlannedWhenTvmFfiImports) {
  const auto plan = plan_build(parse_config(tvm_kernel(R"(["cpu"])")), host_with_tvm_ffi());
  ASSERT_EQ(plan.variants.size(), 1U);
  EXPECT_EQ(plan.variants[0].name, "tvm-ffi01-cpu-x86_64-linux");
  EXPECT_EQ(plan.variants[0].kind, VariantKind::arch);
  EXPECT_TRUE(plan.skipped.empty());
}

TEST(TvmFfiPlan, SkipReasonsArePrecise) {
  const auto config = parse_config(tvm_kernel(R"(["cpu", "cuda", "xpu", "metal"])"));
  const auto without = plan_build(config, HostTools{});
  EXPECT_TRUE(without.variants.empty());
  ASSERT_EQ(without.skipped.size(), 4U);
  EXPECT_EQ(without.skipped[0].reason,
            "the build's Python cannot import tvm_ffi; install apache-tvm-ffi there (`pip install "
            "apache-tvm-ffi`) or pass --python");
  EXPECT_EQ(without.skipped[3].reason,
            "tvm-ffi kernels build only for cpu, cuda and xpu (the reference's tvm-ffi CMake "
            "preamble has no metal path)");

  const auto with = plan_build(config, host_with_tvm_ffi());
  ASSERT_EQ(with.variants.size(), 1U);
  ASSERT_EQ(with.skipped.size(), 3U);
  EXPECT_EQ(with.skipped[0].backend, Backend::cuda);
  EXPECT_EQ(with.skipped[0].reason.rfind("nvcc was not found in PATH", 0), 0U);
  EXPECT_EQ(with.skipped[1].reason.rfind("icpx was not found in PATH", 0), 0U);
  EXPECT_FALSE(with.skipped[0].is_error);
}

TEST(TvmFfiPlan, CudaIsNamedAfterNvccWithTheKernelsArchs) {
  auto host = host_with_tvm_ffi();
  host.cuda_toolkit = toolkit_13_0();
  const auto plan = plan_build(parse_config(tvm_kernel(R"(["cuda"])")), host);
  ASSERT_EQ(plan.variants.size(), 1U) << (plan.skipped.empty() ? "" : plan.skipped[0].reason);
  const auto& cuda = plan.variants[0];
  EXPECT_EQ(cuda.name, "tvm-ffi01-cu130-x86_64-linux");
  ASSERT_TRUE(cuda.cuda.has_value());
  EXPECT_EQ(cuda.cuda->archs, (std::vector<std::string>{"8.0", "9.0+PTX"}));
  ASSERT_EQ(cuda.cuda->kernels.size(), 1U);
  EXPECT_EQ(cuda.cuda->kernels[0].kernel, "relu_cuda");
}

TEST(TvmFfiPlan, CudaBoundsAndEmptyCapabilitiesAreReported) {
  auto host = host_with_tvm_ffi();
  host.cuda_toolkit = toolkit_13_0();
  const auto bounded = plan_build(
      parse_config(tvm_kernel(R"(["cuda"])", "\n[general.cuda]\nmaxver = \"12.9\"\n")), host);
  ASSERT_EQ(bounded.skipped.size(), 1U);
  EXPECT_EQ(bounded.skipped[0].reason,
            "nvcc is CUDA 13.0, newer than general.cuda.maxver \"12.9\"");

  auto text = tvm_kernel(R"(["cuda"])");
  text.replace(text.find(R"(["8.0", "9.0+PTX"])"), 18, R"(["5.0"])");
  const auto empty = plan_build(parse_config(text), host);
  ASSERT_EQ(empty.skipped.size(), 1U);
  EXPECT_TRUE(empty.skipped[0].is_error);
  EXPECT_NE(empty.skipped[0].reason.find("empty set of capabilities"), std::string::npos);
}

TEST(TvmFfiProject, CpuProjectBuildsASharedLibraryNamedAfterTheId) {
  const auto config = parse_config(tvm_kernel(R"(["cpu", "cuda"])"));
  const auto files = tvm_ffi_project(config, "/k", "abc1234", Backend::cpu);
  ASSERT_TRUE(files.has_value()) << files.error().message;
  const auto* cmake = files->find("CMakeLists.txt");
  ASSERT_NE(cmake, nullptr);
  const auto& text = cmake->content;
  EXPECT_NE(text.find("set(OPS_NAME \"_relu_tvm_ffi_cpu_abc1234\")"), std::string::npos);
  // The target's name has no id in it; the file is named after the id.
  EXPECT_NE(text.find("add_library(kernelhub_tvm_ffi SHARED"), std::string::npos);
  EXPECT_EQ(text.find("add_library(${OPS_NAME}"), std::string::npos);
  EXPECT_NE(text.find("OUTPUT_NAME \"${OPS_NAME}\""), std::string::npos);
  EXPECT_NE(text.find("PREFIX \"\""), std::string::npos);
  // Without a reader every source is taken to name the id.
  EXPECT_NE(text.find("set_property(SOURCE \"/k/relu_cpu/relu.cpp\" APPEND PROPERTY "
                      "COMPILE_DEFINITIONS\n  \"TVM_FFI_EXTENSION_NAME=${OPS_NAME}\")"),
            std::string::npos);
  // Headers only: libtvm_ffi comes from the process that imported tvm_ffi (no DT_NEEDED).
  EXPECT_NE(text.find("tvm_ffi_configure_target(kernelhub_tvm_ffi LINK_SHARED OFF)"),
            std::string::npos);
  EXPECT_NE(text.find("-m tvm_ffi.config --cmakedir"), std::string::npos);
  EXPECT_NE(text.find("CPU_KERNEL"), std::string::npos);
  EXPECT_NE(text.find("\"/k/tvm-ffi-ext/binding.cpp\""), std::string::npos);
  EXPECT_NE(text.find("\"/k/relu_cpu/relu.cpp\""), std::string::npos);
  EXPECT_NE(text.find("\"/k/include\""), std::string::npos);
  EXPECT_NE(text.find("$<$<COMPILE_LANGUAGE:CXX>:-DCANARY>"), std::string::npos);
  EXPECT_NE(text.find("$<$<COMPILE_LANGUAGE:CXX>:-O3>"), std::string::npos);
  // The cpu project knows nothing of CUDA nor of the cuda kernel.
  EXPECT_EQ(text.find("relu_cuda"), std::string::npos);
  EXPECT_EQ(text.find("enable_language(CUDA)"), std::string::npos);

  const auto* ops = files->find("tvm-ffi-ext/relu_tvm_ffi/_ops.py");
  ASSERT_NE(ops, nullptr);
  EXPECT_NE(ops->content.find("tvm_ffi.load_module("), std::string::npos);
  EXPECT_NE(ops->content.find("\"_relu_tvm_ffi_cpu_abc1234\""), std::string::npos);
  EXPECT_NE(ops->content.find("return f\"_relu_tvm_ffi_cpu_abc1234::{op_name}\""),
            std::string::npos);
  EXPECT_NE(ops->content.find("return f\"_relu_tvm_ffi_cpu_abc1234.{name}\""), std::string::npos);
}

// Issue 22 §1: a new id (a first commit, a moved folder) must recompile only the sources that
// embed it, so only those that say TVM_FFI_EXTENSION_NAME are given it.
TEST(TvmFfiProject, OnlySourcesThatNameTheExtensionGetTheId) {
  const auto config = parse_config(tvm_kernel(R"(["cpu"])"));
  const codegen::SourceReader reader = [](const std::filesystem::path& path)
      -> std::optional<std::string> {
    if (path == "/k/tvm-ffi-ext/binding.cpp") {
      return "TVM_FFI_DLL_EXPORT_TYPED_FUNC(TVM_FFI_EXTENSION_NAME, relu);";
    }
    return "void relu_cpu() {}";
  };
  const auto files = tvm_ffi_project(config, "/k", "abc1234", Backend::cpu, nullptr, reader);
  ASSERT_TRUE(files.has_value()) << files.error().message;
  const auto& text = files->find("CMakeLists.txt")->content;
  EXPECT_NE(text.find("set_property(SOURCE \"/k/tvm-ffi-ext/binding.cpp\" APPEND PROPERTY "
                      "COMPILE_DEFINITIONS"),
            std::string::npos);
  EXPECT_EQ(text.find("set_property(SOURCE \"/k/relu_cpu/relu.cpp\" APPEND PROPERTY "
                      "COMPILE_DEFINITIONS"),
            std::string::npos);
  // No definition for the whole target names the id.
  EXPECT_EQ(text.find("target_compile_definitions(kernelhub_tvm_ffi PRIVATE\n  "
                      "TVM_FFI_EXTENSION_NAME"),
            std::string::npos);

  // Two ids give CMakeLists.txt files that differ only where the id is named.
  const auto other = tvm_ffi_project(config, "/k", "zzz9999", Backend::cpu, nullptr, reader);
  ASSERT_TRUE(other.has_value());
  auto renamed = other->find("CMakeLists.txt")->content;
  for (auto at = renamed.find("zzz9999"); at != std::string::npos; at = renamed.find("zzz9999")) {
    renamed.replace(at, 7, "abc1234");
  }
  EXPECT_EQ(renamed, text);
}

TEST(TvmFfiProject, CudaProjectCarriesPerSourceNvccFlags) {
  const auto config = parse_config(tvm_kernel(R"(["cpu", "cuda"])"));
  codegen::CudaProjectOptions cuda;
  cuda.kernel_flags["relu_cuda"] = {"-gencode=arch=compute_80,code=sm_80"};
  const auto files = tvm_ffi_project(config, "/k", "abc1234", Backend::cuda, &cuda);
  ASSERT_TRUE(files.has_value()) << files.error().message;
  const auto& text = files->find("CMakeLists.txt")->content;
  EXPECT_NE(text.find("enable_language(CUDA)"), std::string::npos);
  EXPECT_NE(text.find("CUDA_KERNEL"), std::string::npos);
  EXPECT_NE(text.find("\"/k/relu_cuda/relu.cu\""), std::string::npos);
  // '$' is escaped inside the quoted property value; CMake reads it back as a genex.
  EXPECT_NE(text.find("set_property(SOURCE \"/k/relu_cuda/relu.cu\" APPEND PROPERTY "
                      "COMPILE_OPTIONS \"\\$<\\$<COMPILE_LANGUAGE:CUDA>:-gencode=arch=compute_80,"
                      "code=sm_80>\")"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("relu_cpu"), std::string::npos);
}

TEST(TvmFfiProject, RefusesOtherFrameworks) {
  const auto config = parse_config(R"([general]
name = "relu"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cpu"]

[torch-noarch]
)");
  EXPECT_EQ(tvm_ffi_project(config, "/k", "abc1234", Backend::cpu).error().message,
            "a tvm-ffi project needs a [tvm-ffi] kernel");
}

}  // namespace
}  // namespace kernelhub::builder
