// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/builder/torch_environment.hpp>

namespace kernelhub::builder {
namespace {

TEST(TorchEnvironment, ParsesTheProbe) {
  const auto env = parse_torch_probe(
      R"({"torch": "2.15.0+cu132", "cxx11_abi": true, "cuda": "13.2", "hip": null,
          "machine": "AMD64", "system": "linux", "cmake_prefix_path": "/venv/torch/share/cmake",
          "python_include": "/usr/include/python3.11"})");
  ASSERT_TRUE(env.has_value()) << env.error().message;
  EXPECT_EQ(env->python_include, "/usr/include/python3.11");
  EXPECT_EQ(env->torch_version.to_string(), "2.15");
  EXPECT_EQ(env->cuda, "13.2");
  EXPECT_FALSE(env->hip.has_value());
  EXPECT_EQ(env->cpu, "x86_64");
  EXPECT_EQ(env->os, "linux");
  EXPECT_EQ(env->cmake_prefix_path, "/venv/torch/share/cmake");
}

TEST(TorchEnvironment, TwoDigitMinorAndDevSuffix) {
  const auto env = parse_torch_probe(
      R"({"torch": "2.10.0a0+git1234", "machine": "arm64", "system": "darwin"})");
  ASSERT_TRUE(env.has_value()) << env.error().message;
  EXPECT_EQ(env->torch_version.flattened(), "210");
  EXPECT_EQ(env->cpu, "aarch64");
}

TEST(TorchEnvironment, RejectsOutputWithoutTorch) {
  EXPECT_FALSE(parse_torch_probe("not json").has_value());
  const auto env = parse_torch_probe(R"({"machine": "x86_64", "system": "linux"})");
  ASSERT_FALSE(env.has_value());
  EXPECT_EQ(env.error().message, "the torch probe did not report torch.__version__");
}

TEST(TorchEnvironment, ProbeScriptAsksForEveryField) {
  const auto script = std::string(torch_probe_script());
  for (const auto* key : {"\"torch\"", "\"cxx11_abi\"", "\"cuda\"", "\"machine\"", "\"system\"",
                          "\"cmake_prefix_path\"", "\"python_include\""}) {
    EXPECT_NE(script.find(key), std::string::npos) << key;
  }
}

}  // namespace
}  // namespace kernelhub::builder
