// SPDX-License-Identifier: Apache-2.0
// The historic edition 1 and 2 shapes, upgraded into the edition-5 model.
#include <gtest/gtest.h>

#include "reader_test_support.hpp"

namespace kernelhub::config {
namespace {

using testing::read_toml;
using types::Backend;
using types::Version;

constexpr std::string_view k_v2 = R"([general]
name = "gemm"
cuda-minver = "12.0"
cuda-maxver = "12.8"
python-depends = ["einops", "nvidia-cutlass-dsl"]

[general.hub]
repo-id = "kernels-community/gemm"

[torch]
src = ["torch-ext/torch_binding.cpp"]
pyext = ["py", "json"]
minver = "2.5"
maxver = "2.7"

[kernel.gemm_xpu]
backend = "xpu"
depends = ["sycl_tla"]
src = ["gemm_sycl.cpp"]

[kernel.gemm]
backend = "cuda"
depends = ["cutlass_3_6"]
src = ["gemm.cu"]
cuda-capabilities = ["9.0"]
)";

TEST(Edition2, IsUpgradedWithDerivedBackends) {
  const auto outcome = read_toml(k_v2);
  ASSERT_TRUE(outcome.loaded) << util::render(outcome.errors().at(0));
  EXPECT_TRUE(outcome.errors().empty());
  const auto& loaded = *outcome.loaded;
  EXPECT_EQ(loaded.source_edition, 2);
  const auto& g = loaded.config.general;
  EXPECT_EQ(g.name.str(), "gemm");
  EXPECT_EQ(g.version, 1u);
  // The backends are those of the kernels, in the reference's order.
  EXPECT_EQ(g.backends, (std::vector{Backend::cuda, Backend::xpu}));
  EXPECT_EQ(g.cuda->minver, Version({12}));
  EXPECT_EQ(g.cuda->maxver, Version({12, 8}));
  // v2's python-depends enum is split over today's scopes.
  EXPECT_EQ(g.python_depends, std::vector<std::string>{"einops"});
  EXPECT_EQ(g.cuda->python_depends, std::vector<std::string>{"nvidia-cutlass-dsl"});
  EXPECT_EQ(g.hub->repo_id, "kernels-community/gemm");
  const auto& torch = std::get<Torch>(loaded.config.framework);
  EXPECT_EQ(torch.minver, Version({2, 5}));
  EXPECT_EQ(torch.maxver, Version({2, 7}));
  EXPECT_EQ(torch.pyext, (std::vector<std::string>{"py", "json"}));
  ASSERT_EQ(loaded.config.kernels.size(), 2u);
  EXPECT_EQ(loaded.config.kernels[0].name, "gemm_xpu");
  EXPECT_EQ(loaded.config.kernels[1].cuda_capabilities, std::vector<std::string>{"9.0"});

  std::vector<std::string> warnings;
  for (const auto& w : outcome.warnings()) {
    warnings.push_back(w.message);
  }
  EXPECT_EQ(warnings, (std::vector<std::string>{
                          "[general] has no license (edition 2 did not require one)",
                          "build.toml uses the legacy edition 2 format (no `edition` key); it is "
                          "upgraded to edition 5 in memory"}));
}

TEST(Edition2, UniversalBecomesTorchNoarchForEveryBackendButTpu) {
  const auto outcome =
      read_toml("[general]\nname = \"act\"\nuniversal = true\n[torch]\npyext = [\"py\"]\n");
  ASSERT_TRUE(outcome.loaded);
  EXPECT_EQ(outcome.loaded->source_edition, 2);
  EXPECT_EQ(outcome.loaded->config.general.backends,
            (std::vector{Backend::cann, Backend::cpu, Backend::cuda, Backend::metal,
                         Backend::neuron, Backend::rocm, Backend::xpu}));
  EXPECT_EQ(std::get<TorchNoarch>(outcome.loaded->config.framework).pyext,
            std::vector<std::string>{"py"});
}

TEST(Edition2, NeedsATorchTable) {
  const auto outcome = read_toml("[general]\nname = \"act\"\nuniversal = true\n");
  ASSERT_FALSE(outcome.loaded);
  // Without [torch] no edition fits; the closest (v3: noarch, but no backends) is reported.
  EXPECT_EQ(outcome.errors().size(), 1u);
}

constexpr std::string_view k_v1 = R"([general]
name = "relu"

[torch]
src = ["torch-ext/torch_binding.cpp"]
include = ["."]

[kernel.relu]
cuda-capabilities = ["8.0"]
rocm-archs = ["gfx942"]
language = "cuda-hipify"
depends = ["torch"]
src = ["relu.cu"]

[kernel.relu_metal]
language = "metal"
depends = []
src = ["relu.metal"]

[kernel.plain]
depends = []
src = ["plain.cu"]
)";

TEST(Edition1, SplitsHipifiedKernelsAndMapsLanguagesToBackends) {
  const auto outcome = read_toml(k_v1);
  ASSERT_TRUE(outcome.loaded) << util::render(outcome.errors().at(0));
  const auto& loaded = *outcome.loaded;
  EXPECT_EQ(loaded.source_edition, 1);
  EXPECT_EQ(loaded.config.general.backends,
            (std::vector{Backend::cuda, Backend::metal, Backend::rocm}));
  const auto& kernels = loaded.config.kernels;
  ASSERT_EQ(kernels.size(), 4u);
  EXPECT_EQ(kernels[0].name, "relu");
  EXPECT_EQ(kernels[0].backend, Backend::cuda);
  EXPECT_EQ(kernels[0].cuda_capabilities, std::vector<std::string>{"8.0"});
  EXPECT_FALSE(kernels[0].rocm_archs);
  EXPECT_EQ(kernels[1].name, "relu_rocm");
  EXPECT_EQ(kernels[1].backend, Backend::rocm);
  EXPECT_EQ(kernels[1].rocm_archs, std::vector<std::string>{"gfx942"});
  EXPECT_EQ(kernels[1].src, std::vector<std::string>{"relu.cu"});
  EXPECT_EQ(kernels[2].backend, Backend::metal);
  EXPECT_EQ(kernels[3].name, "plain");
  EXPECT_EQ(kernels[3].backend, Backend::cuda);  // the default language
  const auto& torch = std::get<Torch>(loaded.config.framework);
  EXPECT_EQ(torch.include, std::vector<std::string>{"."});
  EXPECT_FALSE(torch.minver);
}

TEST(Edition1, UniversalTorchIsNoarch) {
  const auto outcome =
      read_toml("[general]\nname = \"act\"\n[torch]\nuniversal = true\npyext = [\"py\"]\n");
  ASSERT_TRUE(outcome.loaded);
  EXPECT_EQ(outcome.loaded->source_edition, 1);
  EXPECT_TRUE(outcome.loaded->config.is_noarch());
  EXPECT_EQ(outcome.loaded->config.general.backends.size(), 7u);
}

TEST(Edition1, RefusesAHipifyCopyThatClashes) {
  const auto outcome = read_toml(
      "[general]\nname = \"relu\"\n[torch]\n"
      "[kernel.k]\nlanguage = \"cuda-hipify\"\ndepends = []\nsrc = []\n"
      "[kernel.k_rocm]\ndepends = []\nsrc = []\n");
  ASSERT_FALSE(outcome.loaded);
  ASSERT_EQ(outcome.errors().size(), 1u);
  EXPECT_EQ(outcome.errors()[0].message,
            "kernel \"k_rocm\" is defined twice after expanding cuda-hipify kernels");
  EXPECT_EQ(outcome.errors()[0].location, (util::SourceLocation{"build.toml", 8, 1}));
}

}  // namespace
}  // namespace kernelhub::config
