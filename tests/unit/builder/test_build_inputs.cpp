// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <kernelhub/builder/build_inputs.hpp>
#include <kernelhub/builder/dev_unique_id.hpp>
#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/util/diagnostic.hpp>

#include "../test_support.hpp"

namespace kernelhub::builder {
namespace {

namespace fs = std::filesystem;

using kernelhub::testing::write;

std::string toml(int version) {
  return "[general]\nname = \"relu\"\nversion = " + std::to_string(version) +
         "\nbackends = [\"cpu\"]\nedition = 5\nlicense = \"apache-2.0\"\n\n"
         "[torch]\nsrc = [\"torch-ext/torch_binding.cpp\"]\ninclude = [\"common\"]\n\n"
         "[kernel.relu_cpu]\nbackend = \"cpu\"\ndepends = [\"torch\"]\nsrc = [\"relu_cpu/relu.cpp\"]\n";
}

config::BuildConfig load(const fs::path& kernel) {
  util::DiagnosticCollector sink;
  auto loaded = config::load_build_config(kernel, sink);
  EXPECT_TRUE(loaded.has_value());
  return loaded ? loaded->config : config::BuildConfig{};
}

fs::path make_kernel(const fs::path& kernel) {
  write(kernel / "build.toml", toml(1));
  write(kernel / "torch-ext" / "torch_binding.cpp", "binding");
  write(kernel / "relu_cpu" / "relu.cpp", "relu");
  write(kernel / "common" / "helpers.h", "helpers");
  write(kernel / "torch-ext" / "relu" / "__init__.py", "init");
  return kernel;
}

// What a build of `kernel` now records for its variant.
void record_build(const fs::path& kernel, bool given = false) {
  const auto config = load(kernel);
  const auto unique = given ? std::string("given") : *dev_unique_id_for(kernel);
  const auto digest = inputs_digest(kernel, config);
  ASSERT_TRUE(digest.has_value());
  ASSERT_TRUE(write_build_inputs(kernel / "build", "v", {config.general.version, unique, given,
                                                         *digest}));
}

TEST(BuildInputs, AFreshBuildIsCurrent) {
  const auto kernel = make_kernel(fs::absolute("k"));
  record_build(kernel);
  EXPECT_EQ(stale_reasons(kernel, load(kernel), "v", 1), std::vector<std::string>{});
  // Bytecode and the build itself are not inputs.
  write(kernel / "torch-ext" / "relu" / "__pycache__" / "x.pyc", "x");
  write(kernel / "build" / "v" / "x", "x");
  EXPECT_EQ(stale_reasons(kernel, load(kernel), "v", 1), std::vector<std::string>{});
}

TEST(BuildInputs, EachInputCounts) {
  for (const auto* input : {"build.toml", "torch-ext/torch_binding.cpp", "relu_cpu/relu.cpp",
                            "common/helpers.h", "torch-ext/relu/__init__.py",
                            "torch-ext/relu/new.py"}) {
    const auto kernel = make_kernel(fs::absolute(fs::path("k") / fs::path(input).filename()));
    record_build(kernel);
    std::ofstream(kernel / input, std::ios::app) << "\n# edited\n";
    EXPECT_EQ(stale_reasons(kernel, load(kernel), "v", 1),
              std::vector<std::string>{
                  "build.toml or the kernel's sources changed since it was built"})
        << input;
  }
}

TEST(BuildInputs, AVersionBumpIsStaleWithOrWithoutARecord) {
  const auto kernel = make_kernel(fs::absolute("k"));
  write(kernel / "build.toml", toml(3));
  // No record (another tool's build): the metadata's version.
  EXPECT_EQ(stale_reasons(kernel, load(kernel), "v", 2),
            std::vector<std::string>{"it was built as version 2; build.toml says version 3"});
  EXPECT_EQ(stale_reasons(kernel, load(kernel), "v", 3), std::vector<std::string>{});
  write(kernel / "build.toml", toml(2));
  record_build(kernel);
  write(kernel / "build.toml", toml(3));
  const auto reasons = stale_reasons(kernel, load(kernel), "v", 2);
  ASSERT_EQ(reasons.size(), 2U);
  EXPECT_EQ(reasons[0], "it was built as version 2; build.toml says version 3");
}

TEST(BuildInputs, ACopiedFolderIsStaleUnlessTheIdWasGiven) {
  const auto kernel = make_kernel(fs::absolute("k"));
  record_build(kernel);
  fs::copy(kernel, fs::absolute("copy"), fs::copy_options::recursive);
  const auto reasons = stale_reasons(fs::absolute("copy"), load(fs::absolute("copy")), "v", 1);
  ASSERT_EQ(reasons.size(), 1U);
  EXPECT_TRUE(reasons[0].starts_with("it was built in another folder")) << reasons[0];

  const auto given = make_kernel(fs::absolute("given"));
  record_build(given, true);
  fs::copy(given, fs::absolute("given-copy"), fs::copy_options::recursive);
  EXPECT_EQ(stale_reasons(fs::absolute("given-copy"), load(fs::absolute("given-copy")), "v", 1),
            std::vector<std::string>{});
}

}  // namespace
}  // namespace kernelhub::builder
