// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/variants/compliance_matrix.hpp>

namespace {

using namespace kernelhub::variants;
using kernelhub::types::Backend;

TEST(ComplianceMatrix, BuiltinMatrixMirrorsVersionsNix) {
  const auto matrix = builtin_compliance_matrix();
  ASSERT_TRUE(matrix) << matrix.error().message;
  EXPECT_EQ(matrix->systems, (std::vector<std::string>{"aarch64-darwin", "aarch64-linux", "x86_64-linux"}));
  ASSERT_EQ(matrix->configs.size(), 18u);
  const auto& first = matrix->configs.front();
  EXPECT_EQ(first.torch.text, "2.11");
  EXPECT_EQ(first.backend, Backend::cpu);
  EXPECT_FALSE(first.bundle);
  const auto& xpu = matrix->configs[9];
  EXPECT_EQ(xpu.backend, Backend::xpu);
  EXPECT_EQ(xpu.backend_version->text, "2025.3.2");
  EXPECT_EQ(xpu.tvm_ffi->text, "0.1");
  EXPECT_EQ(matrix->cuda_minver.to_string(), "11.8");
  EXPECT_EQ(matrix->torch_maxver.to_string(), "99.9");
}

TEST(ComplianceMatrix, ReportsTheBrokenEntry) {
  const auto json = [](const std::string& config) {
    return R"({"systems": ["x86_64-linux"], "defaults": {"cuda-minver": "11.8", "cuda-maxver": "99.9",
             "torch-minver": "2.0", "torch-maxver": "99.9"}, "configs": [)" + config + "]}";
  };
  const std::pair<std::string, std::string> cases[] = {
      {R"({"torch": "2.12", "backend": "cudaa", "backend-version": "12.6", "systems": [], "bundle": true})",
       "compliance matrix: configs[0].backend: "},
      {R"({"torch": "2.x", "backend": "cpu", "systems": [], "bundle": true})",
       "compliance matrix: configs[0].torch: "},
      {R"({"torch": "2.12", "backend": "cuda", "systems": [], "bundle": true})",
       "compliance matrix: configs[0]: backend-version is required for backend \"cuda\""},
      {R"({"torch": "2.12", "backend": "cpu", "systems": ["riscv-linux"], "bundle": true})",
       "compliance matrix: configs[0].systems: unknown system \"riscv-linux\""},
      {R"({"torch": "2.12", "backend": "cpu", "systems": []})",
       "compliance matrix: configs[0].bundle: expected a boolean"},
  };
  for (const auto& [config, message] : cases) {
    const auto parsed = parse_compliance_matrix(json(config));
    ASSERT_FALSE(parsed) << config;
    EXPECT_EQ(parsed.error().message.substr(0, message.size()), message) << parsed.error().message;
  }
  EXPECT_EQ(parse_compliance_matrix("[").error().message, "compliance matrix: not a JSON object");
}

}  // namespace
