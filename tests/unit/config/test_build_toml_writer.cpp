// SPDX-License-Identifier: Apache-2.0
#include <string>

#include <gtest/gtest.h>

#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/config/build_toml_writer.hpp>

using namespace kernelhub;
using namespace kernelhub::config;

namespace {

types::Version version(const char* text) { return types::Version::parse(text).value(); }

std::optional<BuildConfig> read_v5(const std::string& text) {
  util::DiagnosticCollector sink;
  auto loaded = read_build_config(text, "build.toml", sink);
  EXPECT_TRUE(loaded.has_value()) << text;
  EXPECT_FALSE(sink.has_errors()) << (sink.all().empty() ? "" : sink.all().front().message);
  EXPECT_EQ(loaded ? loaded->source_edition : 0, k_current_edition);
  if (!loaded) {
    return std::nullopt;
  }
  return loaded->config;
}

// Every field of the model set once, in an order unlike the writer's.
BuildConfig full_config() {
  BuildConfig config{General{types::KernelName::parse("flash-attn").value()}, Torch{}, {}};
  config.general.version = 3;
  config.general.license = "BSD-3-Clause";
  config.general.upstream = types::GitUrl::parse("https://github.com/org/flash.git").value();
  config.general.source = types::GitUrl::parse("git@github.com:org/flash-kb.git").value();
  config.general.backends = {types::Backend::cuda, types::Backend::rocm, types::Backend::xpu};
  config.general.python_depends = std::vector<std::string>{"einops"};
  config.general.kernel_depends =
      std::vector<KernelDependency>{{"kernels-community/activation", 1, std::nullopt},
                                    {"kernels-community/rotary", std::nullopt, "v0.1"}};
  config.general.xpu =
      BackendGeneral{std::nullopt, std::nullopt, std::nullopt, std::vector<std::string>{"onednn"}};
  config.general.cuda = BackendGeneral{version("12.4"), version("12.9"), std::nullopt,
                                       std::vector<std::string>{"nvidia-cutlass-dsl"}};
  config.general.hub = Hub{"kernels-community/flash-attn", "main"};
  Torch torch;
  torch.src = std::vector<std::string>{"torch-ext/torch_binding.cpp", "torch-ext/torch_binding.h"};
  torch.include = std::vector<std::string>{"."};
  torch.minver = version("2.8");
  torch.cxx_flags = std::vector<std::string>{"-O3"};
  torch.stable_abi = std::map<types::Backend, types::Version>{
      {types::Backend::xpu, version("2.10")}, {types::Backend::cuda, version("2.11")}};
  config.framework = torch;
  Kernel cuda;
  cuda.name = "flash_cuda";
  cuda.backend = types::Backend::cuda;
  cuda.depends = {Dependency::torch, Dependency::cutlass_3_9};
  cuda.src = {"flash/flash.cu"};
  cuda.cuda_capabilities = std::vector<std::string>{"8.0", "9.0a"};
  cuda.cuda_minver = version("12.4");
  cuda.cuda_flags = std::vector<std::string>{"--use_fast_math"};
  Kernel rocm;
  rocm.name = "flash rocm";  // not a bare key: must be quoted
  rocm.backend = types::Backend::rocm;
  rocm.depends = {Dependency::torch};
  rocm.src = {"flash/flash.cu"};
  rocm.hip_flags = std::vector<std::string>{"-O2"};
  rocm.rocm_archs = std::vector<std::string>{"gfx90a", "gfx942"};
  config.kernels = {cuda, rocm};
  return config;
}

}  // namespace

TEST(BuildTomlWriter, WritesTheReferenceFieldOrder) {
  const std::string expected = R"([general]
name = "flash-attn"
version = 3
edition = 5
license = "BSD-3-Clause"
upstream = "https://github.com/org/flash.git"
source = "git@github.com:org/flash-kb.git"
backends = ["cuda", "rocm", "xpu"]
kernel-depends = [
    { repo-id = "kernels-community/activation", version = 1 },
    { repo-id = "kernels-community/rotary", revision = "v0.1" },
]
python-depends = ["einops"]

[general.cuda]
minver = "12.4"
maxver = "12.9"
python-depends = ["nvidia-cutlass-dsl"]

[general.hub]
repo-id = "kernels-community/flash-attn"
branch = "main"

[general.xpu]
python-depends = ["onednn"]

[torch]
include = ["."]
minver = "2.8"
src = ["torch-ext/torch_binding.cpp", "torch-ext/torch_binding.h"]
cxx-flags = ["-O3"]

[torch.stable-abi]
cuda = "2.11"
xpu = "2.10"

[kernel.flash_cuda]
backend = "cuda"
cuda-capabilities = ["8.0", "9.0a"]
cuda-flags = ["--use_fast_math"]
cuda-minver = "12.4"
depends = ["torch", "cutlass_3_9"]
src = ["flash/flash.cu"]

[kernel."flash rocm"]
backend = "rocm"
depends = ["torch"]
rocm-archs = ["gfx90a", "gfx942"]
hip-flags = ["-O2"]
src = ["flash/flash.cu"]
)";
  EXPECT_EQ(write_build_toml(full_config()), expected);
}

TEST(BuildTomlWriter, ReadingWhatItWroteGivesTheSameConfig) {
  const auto config = full_config();
  EXPECT_EQ(read_v5(write_build_toml(config)), config);
}

TEST(BuildTomlWriter, RoundTripsEveryFramework) {
  auto noarch = full_config();
  noarch.kernels.clear();
  noarch.framework =
      TorchNoarch{std::vector<std::string>{"json"}, std::vector<std::string>{"8.0"}, std::nullopt};
  const auto noarch_text = write_build_toml(noarch);
  EXPECT_NE(noarch_text.find("[torch-noarch]\npyext = [\"json\"]\ncuda_capabilities = [\"8.0\"]\n"),
            std::string::npos)
      << noarch_text;
  EXPECT_EQ(read_v5(noarch_text), noarch);

  auto empty_noarch = noarch;
  empty_noarch.framework = TorchNoarch{};
  EXPECT_EQ(read_v5(write_build_toml(empty_noarch)), empty_noarch);

  auto tvm = full_config();
  tvm.framework = TvmFfi{{"tvm-ffi-ext/binding.cpp"},
                         std::nullopt,
                         std::vector<std::string>{"so"},
                         std::vector<std::string>{"-O2"}};
  EXPECT_EQ(read_v5(write_build_toml(tvm)), tvm);

  auto single_abi = full_config();
  std::get<Torch>(single_abi.framework).stable_abi = version("2.11");
  const auto single_text = write_build_toml(single_abi);
  EXPECT_NE(single_text.find("stable-abi = \"2.11\"\n"), std::string::npos) << single_text;
  EXPECT_EQ(read_v5(single_text), single_abi);
}

TEST(BuildTomlWriter, WritesCpuMetalAndXpuKernels) {
  auto config = full_config();
  config.general.backends = {types::Backend::cpu, types::Backend::metal, types::Backend::xpu};
  Kernel cpu;
  cpu.name = "k_cpu";
  cpu.backend = types::Backend::cpu;
  cpu.depends = {};
  cpu.src = {"k/cpu.cpp"};
  cpu.cxx_flags = std::vector<std::string>{"-march=native"};
  Kernel metal = cpu;
  metal.name = "k_metal";
  metal.backend = types::Backend::metal;
  metal.depends = {Dependency::metal_cpp};
  Kernel xpu = cpu;
  xpu.name = "k_xpu";
  xpu.backend = types::Backend::xpu;
  xpu.depends = {Dependency::sycl_tla};
  xpu.sycl_flags = std::vector<std::string>{"-fsycl"};
  xpu.include = std::vector<std::string>{"k"};
  config.kernels = {cpu, metal, xpu};
  const auto text = write_build_toml(config);
  EXPECT_NE(text.find("[kernel.k_cpu]\nbackend = \"cpu\"\ncxx-flags = [\"-march=native\"]\n"
                      "depends = []\nsrc = [\"k/cpu.cpp\"]\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("depends = [\"sycl_tla\"]\nsycl-flags = [\"-fsycl\"]\ninclude = [\"k\"]\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(read_v5(text), config);
}

TEST(BuildTomlWriter, QuotesStringsAndKeys) {
  EXPECT_EQ(toml_string("plain"), "\"plain\"");
  EXPECT_EQ(toml_string("say \"hi\"\\"), "\"say \\\"hi\\\"\\\\\"");
  EXPECT_EQ(toml_string("tab\there"), "\"tab\\there\"");
  EXPECT_EQ(toml_key("relu_cuda-2"), "relu_cuda-2");
  EXPECT_EQ(toml_key("a.b"), "\"a.b\"");
  EXPECT_EQ(toml_key(""), "\"\"");
  const std::vector<std::string> values{"a", "b\"c"};
  EXPECT_EQ(toml_inline_array(values), "[\"a\", \"b\\\"c\"]");
  EXPECT_EQ(toml_inline_array({}), "[]");
}

TEST(BuildTomlWriter, LongArraysGoOnePerLine) {
  auto config = full_config();
  config.kernels.front().cuda_capabilities = std::vector<std::string>{
      "7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "10.1", "12.0"};
  const auto text = write_build_toml(config);
  EXPECT_NE(text.find("cuda-capabilities = [\n    \"7.0\",\n    \"7.2\",\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("    \"12.0\",\n]\n"), std::string::npos) << text;
  EXPECT_EQ(read_v5(text), config);
}
