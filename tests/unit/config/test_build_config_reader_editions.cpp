// SPDX-License-Identifier: Apache-2.0
// Files without an `edition` key: detection of editions 4 and 3 and their in-memory upgrade.
#include <gtest/gtest.h>

#include "reader_test_support.hpp"

namespace kernelhub::config {
namespace {

using testing::read_toml;
using types::Backend;
using types::Version;

const std::string k_upgrade_hint = "run `kernel-builder update-build` to persist the upgrade";

// relu-archs-subset from the reference's examples: a real edition-4 file.
constexpr std::string_view k_v4 = R"([general]
name = "relu-archs-subset"
version = 2
license = "Apache-2.0"
upstream = "https://github.com/org/relu"
backends = ["cuda", "rocm"]
python-depends = ["einops"]

[general.cuda]
minver = "12.4"
python-depends = ["nvidia-cutlass-dsl"]

[general.hub]
repo-id = "kernels-test/relu-archs-subset"

[torch]
src = ["torch-ext/torch_binding.cpp"]
stable-abi = "2.10"
cxx-flags = ["-O2"]

[kernel.relu]
backend = "cuda"
cuda-capabilities = ["7.5", "8.0"]
depends = ["torch"]
src = ["relu_cuda/relu.cu"]

[kernel.relu_rocm]
backend = "rocm"
depends = ["torch"]
rocm-archs = ["gfx90a"]
src = ["relu_cuda/relu.cu"]
)";

TEST(Edition4, IsUpgradedInMemoryWithAWarning) {
  const auto outcome = read_toml(k_v4);
  ASSERT_TRUE(outcome.loaded);
  EXPECT_TRUE(outcome.errors().empty());
  const auto warnings = outcome.warnings();
  ASSERT_EQ(warnings.size(), 1u);
  const auto& warning = warnings[0];
  EXPECT_EQ(warning.message,
            "build.toml uses the legacy edition 4 format (no `edition` key); it is upgraded to "
            "edition 5 in memory");
  EXPECT_EQ(warning.hint, k_upgrade_hint);
  EXPECT_EQ(warning.location, (util::SourceLocation{"build.toml", 1, 1}));

  const auto& loaded = *outcome.loaded;
  EXPECT_EQ(loaded.source_edition, 4);
  const auto& g = loaded.config.general;
  EXPECT_EQ(g.name.str(), "relu-archs-subset");
  EXPECT_EQ(g.version, 2u);
  EXPECT_EQ(g.license, "Apache-2.0");
  EXPECT_EQ(g.upstream->original(), "https://github.com/org/relu");
  EXPECT_EQ(g.backends, (std::vector{Backend::cuda, Backend::rocm}));
  EXPECT_EQ(g.python_depends, std::vector<std::string>{"einops"});
  EXPECT_EQ(g.cuda->minver, Version({12, 4}));
  EXPECT_EQ(g.cuda->python_depends, std::vector<std::string>{"nvidia-cutlass-dsl"});
  EXPECT_FALSE(g.kernel_depends);  // edition-5-only fields stay unset
  EXPECT_FALSE(g.tpu);
  EXPECT_EQ(g.hub->repo_id, "kernels-test/relu-archs-subset");
  const auto& torch = std::get<Torch>(loaded.config.framework);
  // A v4 stable-abi string applies to every backend: TorchAbi::All.
  EXPECT_EQ(torch.stable_abi, TorchStableAbi{Version({2, 10})});
  EXPECT_EQ(torch.cxx_flags, std::vector<std::string>{"-O2"});
  ASSERT_EQ(loaded.config.kernels.size(), 2u);
  EXPECT_EQ(loaded.config.kernels[0].cuda_capabilities, (std::vector<std::string>{"7.5", "8.0"}));
  EXPECT_EQ(loaded.config.kernels[1].rocm_archs, std::vector<std::string>{"gfx90a"});
}

TEST(Edition4, RefusesEdition5OnlyKeys) {
  std::string text(k_v4);
  text.replace(text.find("[general.hub]"), 0, "[general.tpu]\n\n");
  const auto outcome = read_toml(text);
  EXPECT_FALSE(outcome.loaded);
  ASSERT_EQ(outcome.errors().size(), 1u);
  EXPECT_EQ(outcome.errors()[0].message, "\"tpu\" needs edition 5");
  // The errors are those of the edition that fitted best, and the warning says which it was.
  ASSERT_EQ(outcome.warnings().size(), 1u);
  EXPECT_EQ(outcome.warnings()[0].message,
            "build.toml has no `edition` key and matches no legacy format; it was checked as "
            "edition 4, the closest");
}

TEST(Edition4, RefusesAPerBackendStableAbiTable) {
  std::string text(k_v4);
  text.replace(text.find("stable-abi = \"2.10\""), 19, "stable-abi = { cuda = \"2.10\" }");
  const auto outcome = read_toml(text);
  ASSERT_EQ(outcome.errors().size(), 1u);
  EXPECT_EQ(outcome.errors()[0].message,
            "expected a version string for \"torch.stable-abi\", found a table");
  EXPECT_EQ(outcome.errors()[0].location.line, 18u);
  EXPECT_EQ(outcome.errors()[0].location.column, 14u);
}

constexpr std::string_view k_v3 = R"([general]
name = "activation"
upstream = "https://github.com/org/activation"
backends = ["cuda"]

[general.hub]
repo-id = "kernels-community/activation"

[tvm-ffi]
src = ["tvm-ffi-ext/binding.cpp"]
include = ["."]

[kernel.act]
backend = "cuda"
depends = []
src = ["act.cu"]
)";

TEST(Edition3, IsUpgradedWithVersionOneAndAWarningForTheLicense) {
  const auto outcome = read_toml(k_v3);
  ASSERT_TRUE(outcome.loaded);
  const auto warnings = outcome.warnings();
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0].message, "[general] has no license (edition 3 did not require one)");
  EXPECT_EQ(warnings[0].hint,
            "add license = \"<SPDX identifier>\": `kernel-builder update-build` needs it");
  EXPECT_NE(warnings[1].message.find("legacy edition 3"), std::string::npos);
  const auto& loaded = *outcome.loaded;
  EXPECT_EQ(loaded.source_edition, 3);
  EXPECT_EQ(loaded.config.general.version, 1u);  // as the reference's migration does
  EXPECT_EQ(loaded.config.general.license, "");
  EXPECT_EQ(loaded.config.general.hub->repo_id, "kernels-community/activation");
  const auto& tvm = std::get<TvmFfi>(loaded.config.framework);
  EXPECT_EQ(tvm.src, std::vector<std::string>{"tvm-ffi-ext/binding.cpp"});
  EXPECT_EQ(tvm.include, std::vector<std::string>{"."});
  EXPECT_FALSE(tvm.cxx_flags);
  ASSERT_EQ(loaded.config.kernels.size(), 1u);
}

TEST(Edition3, NoFrameworkMeansTorchNoarch) {
  const auto outcome = read_toml("[general]\nname = \"noarch\"\nbackends = [\"cuda\", \"xpu\"]\n"
                                 "license = \"MIT\"\nversion = 4\n"
                                 "[general.xpu]\npython-depends = [\"onednn\"]\n");
  ASSERT_TRUE(outcome.loaded);
  EXPECT_EQ(outcome.loaded->source_edition, 3);
  EXPECT_TRUE(outcome.loaded->config.is_noarch());
  EXPECT_EQ(std::get<TorchNoarch>(outcome.loaded->config.framework), TorchNoarch{});
  EXPECT_EQ(outcome.loaded->config.general.version, 4u);
  EXPECT_EQ(outcome.loaded->config.general.license, "MIT");
  EXPECT_EQ(outcome.loaded->config.general.xpu->python_depends,
            std::vector<std::string>{"onednn"});
  ASSERT_EQ(outcome.warnings().size(), 1u);  // only the upgrade: the license is there
}

TEST(EditionDetection, ReportsTheErrorsOfTheClosestEdition) {
  // A v4 file with one typo: v4 fits with one error, v3 with more; v4's error is reported.
  std::string text(k_v4);
  text.replace(text.find("backends"), 8, "backend");
  const auto outcome = read_toml(text);
  ASSERT_EQ(outcome.errors().size(), 1u);
  EXPECT_EQ(outcome.errors()[0].message, "unknown key \"backend\" in [general]");
  EXPECT_EQ(outcome.errors()[0].hint, "did you mean \"backends\"?");
  EXPECT_NE(outcome.warnings().at(0).message.find("checked as edition 4"), std::string::npos);
}

TEST(EditionDetection, AnEmptyFileIsMissingGeneral) {
  const auto outcome = read_toml("");
  ASSERT_EQ(outcome.errors().size(), 1u);
  EXPECT_EQ(outcome.errors()[0].message, "missing table [general]");
  EXPECT_EQ(outcome.errors()[0].location, (util::SourceLocation{"build.toml", 1, 1}));
}

}  // namespace
}  // namespace kernelhub::config
