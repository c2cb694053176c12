// SPDX-License-Identifier: Apache-2.0
// Valid edition-5 files: every section read into the model, with locations.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "reader_test_support.hpp"

namespace kernelhub::config {
namespace {

using testing::read_toml;
using types::Backend;
using types::Version;

constexpr std::string_view k_full = R"(# every edition-5 key
[general]
name = "flash-attn"
version = 3
edition = 5
license = "BSD-3-Clause"
upstream = "https://github.com/Dao-AILab/flash-attention"
source = "git@github.com:kernels-community/flash-attn.git"
backends = ["cuda", "rocm", "xpu", "tpu", "neuron"]
kernel-depends = [{ repo-id = "kernels-community/activation", version = 1 }]
python-depends = ["einops"]

[general.cuda]
minver = "12.6"
maxver = "13.0"
kernel-depends = [{ repo-id = "kernels-community/cutlass-utils", revision = "abc123" }]
python-depends = ["nvidia-cutlass-dsl"]

[general.neuron]
python-depends = ["nki"]

[general.xpu]
python-depends = ["onednn"]

[general.tpu]

[general.hub]
repo-id = "kernels-community/flash-attn"
branch = "main"

[torch]
src = ["torch-ext/torch_binding.cpp"]
include = ["."]
pyext = ["py", "json"]
minver = "2.8"
maxver = "2.10"
cxx-flags = ["-O3"]

[torch.stable-abi]
cuda = "2.11"
rocm = "2.11"

[kernel.fwd]
backend = "cuda"
depends = ["torch", "cutlass_3_9"]
src = ["fwd.cu"]
include = ["csrc"]
cxx-flags = ["-DX"]
cuda-capabilities = ["9.0a", "10.0"]
cuda-flags = ["--use_fast_math"]
cuda-minver = "12.8"

[kernel.fwd_rocm]
backend = "rocm"
depends = ["torch"]
src = ["fwd.cu"]
rocm-archs = ["gfx942"]
hip-flags = ["-O3"]

[kernel.fwd_xpu]
backend = "xpu"
depends = ["torch", "sycl_tla"]
src = ["fwd_xpu.cpp"]
sycl-flags = ["-fsycl"]
)";

TEST(BuildConfigReader, ReadsEveryEdition5Field) {
  const auto outcome = read_toml(k_full);
  ASSERT_TRUE(outcome.loaded) << (outcome.diagnostics.empty()
                                      ? ""
                                      : util::render(outcome.diagnostics[0]));
  EXPECT_TRUE(outcome.diagnostics.empty());
  const auto& loaded = *outcome.loaded;
  EXPECT_EQ(loaded.source_edition, 5);
  EXPECT_EQ(loaded.file_name, "build.toml");
  EXPECT_EQ(loaded.text, k_full);

  const auto& g = loaded.config.general;
  EXPECT_EQ(g.name.str(), "flash-attn");
  EXPECT_EQ(g.version, 3u);
  EXPECT_EQ(g.license, "BSD-3-Clause");
  ASSERT_TRUE(g.upstream);
  EXPECT_EQ(g.upstream->original(), "https://github.com/Dao-AILab/flash-attention");
  ASSERT_TRUE(g.source);
  EXPECT_EQ(g.source->scheme(), "ssh");
  EXPECT_EQ(g.backends, (std::vector{Backend::cuda, Backend::rocm, Backend::xpu, Backend::tpu,
                                     Backend::neuron}));
  ASSERT_TRUE(g.kernel_depends);
  EXPECT_EQ(*g.kernel_depends,
            (std::vector<KernelDependency>{{"kernels-community/activation", 1, std::nullopt}}));
  EXPECT_EQ(g.python_depends, std::vector<std::string>{"einops"});
  ASSERT_TRUE(g.cuda);
  EXPECT_EQ(g.cuda->minver, Version({12, 6}));
  EXPECT_EQ(g.cuda->maxver, Version({13}));
  EXPECT_EQ(
      *g.cuda->kernel_depends,
      (std::vector<KernelDependency>{{"kernels-community/cutlass-utils", std::nullopt, "abc123"}}));
  EXPECT_EQ(g.cuda->python_depends, std::vector<std::string>{"nvidia-cutlass-dsl"});
  EXPECT_EQ(g.neuron->python_depends, std::vector<std::string>{"nki"});
  EXPECT_EQ(g.xpu->python_depends, std::vector<std::string>{"onednn"});
  ASSERT_TRUE(g.tpu);
  EXPECT_FALSE(g.tpu->python_depends);
  EXPECT_EQ(g.hub, (Hub{"kernels-community/flash-attn", "main"}));

  const auto* torch = std::get_if<Torch>(&loaded.config.framework);
  ASSERT_NE(torch, nullptr);
  EXPECT_EQ(torch->src, std::vector<std::string>{"torch-ext/torch_binding.cpp"});
  EXPECT_EQ(torch->include, std::vector<std::string>{"."});
  EXPECT_EQ(torch->pyext, (std::vector<std::string>{"py", "json"}));
  EXPECT_EQ(torch->minver, Version({2, 8}));
  EXPECT_EQ(torch->maxver, Version({2, 10}));
  EXPECT_EQ(torch->cxx_flags, std::vector<std::string>{"-O3"});
  const auto expected_abi = std::map<Backend, Version>{{Backend::cuda, Version({2, 11})},
                                                       {Backend::rocm, Version({2, 11})}};
  EXPECT_EQ(torch->stable_abi, TorchStableAbi{expected_abi});

  const auto& kernels = loaded.config.kernels;
  ASSERT_EQ(kernels.size(), 3u);
  // File order, not toml++'s sorted order ("fwd", "fwd_rocm", "fwd_xpu" happen to agree, so
  // the next test checks a file where they do not).
  EXPECT_EQ(kernels[0].name, "fwd");
  EXPECT_EQ(kernels[0].backend, Backend::cuda);
  EXPECT_EQ(kernels[0].depends, (std::vector{Dependency::torch, Dependency::cutlass_3_9}));
  EXPECT_EQ(kernels[0].cuda_capabilities, (std::vector<std::string>{"9.0a", "10.0"}));
  EXPECT_EQ(kernels[0].cuda_flags, std::vector<std::string>{"--use_fast_math"});
  EXPECT_EQ(kernels[0].cuda_minver, Version({12, 8}));
  EXPECT_EQ(kernels[0].include, std::vector<std::string>{"csrc"});
  EXPECT_EQ(kernels[0].cxx_flags, std::vector<std::string>{"-DX"});
  EXPECT_EQ(kernels[1].backend, Backend::rocm);
  EXPECT_EQ(kernels[1].rocm_archs, std::vector<std::string>{"gfx942"});
  EXPECT_EQ(kernels[1].hip_flags, std::vector<std::string>{"-O3"});
  EXPECT_FALSE(kernels[1].cuda_capabilities);
  EXPECT_EQ(kernels[2].sycl_flags, std::vector<std::string>{"-fsycl"});
  EXPECT_EQ(kernels[2].depends, (std::vector{Dependency::torch, Dependency::sycl_tla}));
}

TEST(BuildConfigReader, RecordsWhereEveryKeyWasWritten) {
  const auto outcome = read_toml(k_full);
  ASSERT_TRUE(outcome.loaded);
  const auto& at = outcome.loaded->locations;
  const auto expect_at = [&](const std::string& path, std::uint32_t line, std::uint32_t column) {
    ASSERT_TRUE(at.count(path)) << path;
    EXPECT_EQ(at.at(path), (util::SourceLocation{"build.toml", line, column})) << path;
  };
  expect_at("general", 2, 1);
  expect_at("general.name", 3, 1);
  expect_at("general.backends", 9, 1);
  expect_at("general.backends[1]", 9, 21);
  expect_at("general.kernel-depends[0]", 10, 19);
  expect_at("general.kernel-depends[0].repo-id", 10, 21);
  expect_at("general.cuda", 13, 1);
  expect_at("general.cuda.minver", 14, 1);
  expect_at("torch.stable-abi", 39, 1);
  expect_at("torch.stable-abi.rocm", 41, 1);
  expect_at("kernel.fwd", 43, 1);
  expect_at("kernel.fwd.cuda-capabilities", 49, 1);
  expect_at("kernel.fwd_xpu.sycl-flags", 64, 1);
}

TEST(BuildConfigReader, KeepsKernelsInFileOrder) {
  const std::string text = std::string(testing::k_general5) + std::string(testing::k_torch) +
                           "[kernel.zeta]\nbackend = \"cuda\"\ndepends = []\nsrc = []\n"
                           "[kernel.alpha]\nbackend = \"cuda\"\ndepends = []\nsrc = []\n"
                           "[kernel.mid]\nbackend = \"cuda\"\ndepends = []\nsrc = []\n";
  const auto outcome = read_toml(text);
  ASSERT_TRUE(outcome.loaded);
  std::vector<std::string> names;
  for (const auto& kernel : outcome.loaded->config.kernels) {
    names.push_back(kernel.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"zeta", "alpha", "mid"}));
}

TEST(BuildConfigReader, ReadsNoarchAndTvmFfiFrameworks) {
  const auto noarch = read_toml(std::string(testing::k_general5) +
                                "[torch-noarch]\npyext = [\"py\"]\ncuda_capabilities = [\"8.0\"]\n"
                                "rocm-archs = [\"gfx942\"]\n\n[kernel]\n");
  ASSERT_TRUE(noarch.loaded);
  EXPECT_TRUE(noarch.loaded->config.is_noarch());
  const auto& n = std::get<TorchNoarch>(noarch.loaded->config.framework);
  EXPECT_EQ(n.cuda_capabilities, std::vector<std::string>{"8.0"});
  // The documented kebab-case spelling is accepted too (the reference only takes snake_case).
  EXPECT_EQ(n.rocm_archs, std::vector<std::string>{"gfx942"});
  EXPECT_TRUE(noarch.loaded->config.kernels.empty());

  const auto tvm = read_toml(std::string(testing::k_general5) +
                             "[tvm-ffi]\nsrc = [\"b.cpp\"]\ncxx-flags = [\"-O2\"]\n");
  ASSERT_TRUE(tvm.loaded);
  const auto& t = std::get<TvmFfi>(tvm.loaded->config.framework);
  EXPECT_EQ(t.src, std::vector<std::string>{"b.cpp"});
  EXPECT_EQ(t.cxx_flags, std::vector<std::string>{"-O2"});
}

TEST(BuildConfigReader, AcceptsWhatTheReferenceAccepts) {
  // Each line is a quirk of the reference's parser that real files may rely on.
  const std::string base = std::string(testing::k_general5);
  for (const std::string extra : {
           std::string("[general.cuda]\nminver = \" 12.8 \"\n"),  // versions are trimmed
           std::string("[general.cuda]\nminver = \"+12.8\"\n"),   // usize accepts a '+'
           std::string("[general.cuda]\nminver = \"12.0\"\n"),    // two parts, normalised
           std::string("[torch.stable-abi]\n"),                   // an empty table
           std::string("[kernel.\"Any Name!\"]\nbackend = \"cuda\"\ndepends = []\nsrc = []\n"),
       }) {
    const auto outcome = read_toml(base + std::string(testing::k_torch) + extra);
    EXPECT_TRUE(outcome.loaded) << extra
                                << (outcome.errors().empty() ? ""
                                                             : util::render(outcome.errors()[0]));
  }
}

TEST(BuildConfigReader, WarnsWithoutFailing) {
  const std::string text =
      "[general]\nname = \"relu\"\nversion = 1\nedition = 5\nlicense = \"MIT\"\n"
      "backends = [\"cpu\", \"cpu\"]\n"
      "[torch]\nminver = \"2.9\"\nmaxver = \"2.8\"\n"
      "[torch.stable-abi]\ncuda = \"2.11\"\n"
      "[kernel.k]\nbackend = \"cuda\"\ndepends = []\nsrc = []\n";
  const auto outcome = read_toml(text);
  ASSERT_TRUE(outcome.loaded);
  std::vector<std::string> messages;
  for (const auto& w : outcome.warnings()) {
    messages.push_back(fmt::format("{}:{} {}", w.location.line, w.location.column, w.message));
  }
  EXPECT_EQ(messages,
            (std::vector<std::string>{
                "6:20 duplicate backend \"cpu\"",
                "9:10 torch.maxver \"2.8\" is older than torch.minver \"2.9\"",
                "11:1 torch.stable-abi sets backend \"cuda\", which general.backends does not list",
                "13:1 kernel \"k\" has backend \"cuda\", which general.backends does not list",
            }));
  EXPECT_EQ(outcome.loaded->config.general.backends, std::vector<Backend>{Backend::cpu});
}

TEST(LoadBuildConfig, ReadsBuildTomlFromADirectory) {
  std::filesystem::create_directory("kernel");
  std::ofstream("kernel/build.toml") << testing::k_general5 << testing::k_torch;
  util::DiagnosticCollector sink;
  const auto loaded = load_build_config("kernel", sink);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->file_name, "kernel/build.toml");
  EXPECT_EQ(loaded->config.general.name.str(), "relu");
}

TEST(LoadBuildConfig, ExplainsWhatIsMissing) {
  util::DiagnosticCollector sink;
  EXPECT_EQ(load_build_config("nowhere", sink).error().message, "\"nowhere\" is not a directory");
  std::filesystem::create_directory("empty");
  EXPECT_EQ(load_build_config("empty", sink).error().message, "no build.toml in \"empty\"");
  std::filesystem::create_directory("broken");
  std::ofstream("broken/build.toml") << "[general]\n";
  EXPECT_EQ(load_build_config("broken", sink).error().message, "\"broken/build.toml\" has errors");
  EXPECT_TRUE(sink.has_errors());
}

}  // namespace
}  // namespace kernelhub::config
