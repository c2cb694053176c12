// SPDX-License-Identifier: Apache-2.0
#include <string>

#include <gtest/gtest.h>

#include <kernelhub/config/build_config_reader.hpp>
#include <kernelhub/config/edition_upgrade.hpp>

#include "../test_support.hpp"

using namespace kernelhub;
using namespace kernelhub::config;

namespace {

// What the reader makes of `text` in memory (the model every upgrade must reproduce).
std::optional<LoadedBuildConfig> read(const std::string& text) {
  util::DiagnosticCollector sink;
  auto loaded = read_build_config(text, "build.toml", sink);
  EXPECT_TRUE(loaded.has_value()) << text;
  EXPECT_FALSE(sink.has_errors()) << (sink.all().empty() ? "" : sink.all().front().message);
  return loaded;
}

BuildTomlUpgrade upgrade(const std::string& text, util::DiagnosticCollector& sink) {
  auto result = upgrade_build_toml_text(text, "build.toml", sink);
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().message);
  return result ? *result : BuildTomlUpgrade{};
}

// Checks the contract every successful upgrade keeps: edition 5 on reading back, the same
// model as the reader's in-memory upgrade, and nothing left to do on a second run.
void expect_faithful(const std::string& original, const std::string& upgraded) {
  const auto before = read(original);
  const auto after = read(upgraded);
  ASSERT_TRUE(before && after);
  EXPECT_EQ(after->source_edition, k_current_edition);
  EXPECT_EQ(after->config, before->config);
  util::DiagnosticCollector sink;
  const auto again = upgrade(upgraded, sink);
  EXPECT_EQ(again.text, upgraded);
  EXPECT_EQ(again.method, UpgradeMethod::unchanged);
}

const std::string k_v4 = R"(# ReLU, the example kernel.
[general]
name = "relu"
version = 1 # bump on breaking changes
license = "Apache-2.0"
backends = [
    "cuda",  # only CUDA for now
    "rocm",
]

[general.hub]
repo-id = "kernels-test/relu"

[torch]
src = ["torch-ext/torch_binding.cpp", "torch-ext/torch_binding.h"]
stable-abi = "2.11"

# The kernels below are shared by CUDA and ROCm.
[kernel.relu]
backend = "cuda"
depends = ["torch"]
src = ["relu_cuda/relu.cu"]

[kernel.relu_rocm]
backend = "rocm"
depends = ["torch"]
src = ["relu_cuda/relu.cu"]
)";

using kernelhub::testing::replace;

}  // namespace

TEST(EditionUpgrade, LeavesEditionFiveUntouched) {
  const auto v5 = replace(k_v4, "license", "edition = 5\nlicense");
  util::DiagnosticCollector sink;
  const auto result = upgrade(v5, sink);
  EXPECT_EQ(result.text, v5);
  EXPECT_EQ(result.method, UpgradeMethod::unchanged);
  EXPECT_EQ(result.source_edition, 5);
  EXPECT_TRUE(sink.all().empty());
}

TEST(EditionUpgrade, EditionFourGainsOneLineAfterVersion) {
  util::DiagnosticCollector sink;
  const auto result = upgrade(k_v4, sink);
  EXPECT_EQ(result.text, replace(k_v4, "changes\n", "changes\nedition = 5\n"));
  EXPECT_EQ(result.source_edition, 4);
  EXPECT_EQ(result.method, UpgradeMethod::edited);
  EXPECT_TRUE(sink.all().empty()) << sink.all().front().message;
  expect_faithful(k_v4, result.text);
}

TEST(EditionUpgrade, KeepsIndentationLineEndingsAndAMissingFinalNewline) {
  std::string crlf;
  for (char c : replace(k_v4, "version = 1", "  version = 1")) {
    crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  }
  util::DiagnosticCollector sink;
  EXPECT_EQ(upgrade(crlf, sink).text, replace(crlf, "changes\r\n", "changes\r\n  edition = 5\r\n"));

  const std::string bare =
      "[torch]\nsrc = []\n[general]\nname = \"relu\"\nlicense = \"MIT\"\n"
      "backends = [\"cpu\"]\nversion = 2";
  const auto result = upgrade(bare, sink);
  EXPECT_EQ(result.text, bare + "\nedition = 5");
  expect_faithful(bare, result.text);
}

TEST(EditionUpgrade, EditsDottedAndInlineGeneralTables) {
  const std::string dotted =
      "general.name = \"relu\"\ngeneral.version = 1\n"
      "general.license = \"MIT\"\ngeneral.backends = [\"cpu\"]\n"
      "torch.src = []\n";
  util::DiagnosticCollector sink;
  const auto dotted_result = upgrade(dotted, sink);
  EXPECT_EQ(dotted_result.text,
            replace(dotted, "version = 1\n", "version = 1\ngeneral.edition = 5\n"));
  expect_faithful(dotted, dotted_result.text);

  const std::string inline_table =
      "general = { name = \"relu\", version = 1, license = \"MIT\", backends = [\"cpu\"] }\n"
      "[torch]\n";
  const auto inline_result = upgrade(inline_table, sink);
  EXPECT_EQ(inline_result.text, replace(inline_table, "version = 1", "version = 1, edition = 5"));
  expect_faithful(inline_table, inline_result.text);
  EXPECT_TRUE(sink.all().empty());
}

TEST(EditionUpgrade, EditionThreeGainsVersionAndANoarchTable) {
  const std::string v3 = R"([general]
name = "silu"  # the name
license = "Apache-2.0"
backends = ["cuda"]

# Kernels
# (one per backend)
[kernel.silu]
backend = "cuda"
depends = ["torch"]
src = ["silu/silu.cu"]
)";
  util::DiagnosticCollector sink;
  const auto result = upgrade(v3, sink);
  EXPECT_EQ(result.text, R"([general]
name = "silu"  # the name
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cuda"]

[torch-noarch]

# Kernels
# (one per backend)
[kernel.silu]
backend = "cuda"
depends = ["torch"]
src = ["silu/silu.cu"]
)");
  EXPECT_EQ(result.source_edition, 3);
  EXPECT_EQ(result.method, UpgradeMethod::edited);
  expect_faithful(v3, result.text);

  const std::string no_kernels =
      "[general]\nname = \"silu\"\nversion = 2\nlicense = \"MIT\"\n"
      "backends = [\"cpu\"]\n# the end";
  const auto appended = upgrade(no_kernels, sink);
  EXPECT_EQ(appended.text, replace(no_kernels, "version = 2\n", "version = 2\nedition = 5\n") +
                               "\n\n[torch-noarch]\n");
  expect_faithful(no_kernels, appended.text);
}

TEST(EditionUpgrade, EditionThreeWithoutLicenseIsAnErrorAtGeneral) {
  const std::string v3 = "# no license\n[general]\nname = \"silu\"\nbackends = [\"cpu\"]\n";
  util::DiagnosticCollector sink;
  const auto result = upgrade_build_toml_text(v3, "build.toml", sink);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message, "cannot update build configuration: build.toml has errors");
  const auto diagnostics = sink.sorted();
  ASSERT_FALSE(diagnostics.empty());
  const auto license = std::find_if(diagnostics.begin(), diagnostics.end(), [](const auto& d) {
    return d.message == "the `license` key is required in the `general` section";
  });
  ASSERT_NE(license, diagnostics.end());
  EXPECT_EQ(license->severity, util::Severity::error);
  EXPECT_EQ(license->location, (util::SourceLocation{"build.toml", 2, 1}));
  EXPECT_EQ(license->source_line, "[general]");
  EXPECT_NE(license->hint.find("license = \"Apache-2.0\""), std::string::npos);
}

TEST(EditionUpgrade, ReportsWhatTheReaderRejects) {
  util::DiagnosticCollector sink;
  EXPECT_FALSE(upgrade_build_toml_text("[general\nname = 1", "build.toml", sink).has_value());
  EXPECT_TRUE(sink.has_errors());

  util::DiagnosticCollector unsupported;
  const auto six = replace(k_v4, "license", "edition = 6\nlicense");
  EXPECT_FALSE(upgrade_build_toml_text(six, "build.toml", unsupported).has_value());
  EXPECT_TRUE(unsupported.has_errors());
}

TEST(EditionUpgrade, LicenseOptionFillsAMissingLicense) {
  const std::string v3 = "[general]\nname = \"silu\"\nversion = 1\nbackends = [\"cpu\"]\n[torch]\n";
  util::DiagnosticCollector sink;
  const auto result = upgrade_build_toml_text(v3, "build.toml", sink, {.license = "MIT"});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->text,
            replace(v3, "version = 1\n", "version = 1\nedition = 5\nlicense = \"MIT\"\n"));
  const auto after = read(result->text);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->config.general.license, "MIT");
  // A license already in the file wins over the option.
  const auto kept = upgrade_build_toml_text(k_v4, "build.toml", sink, {.license = "MIT"});
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(read(kept->text)->config.general.license, "Apache-2.0");
}

TEST(EditionUpgrade, EditionOneLanguagesBecomeBackends) {
  const std::string v1 = R"(# A v1 kernel
[general]
name = "activation"

[torch]
src = ["torch-ext/torch_binding.cpp"]
universal = false

# Activation kernels
[kernel.activation]
language = "cuda-hipify"  # built for ROCm as well
cuda-capabilities = ["8.0", "9.0"]
rocm-archs = ["gfx942"]
depends = ["torch"]
src = ["activation/act.cu"]

[kernel.metal_act]
language = "metal"
cuda-capabilities = ["8.0"]
depends = ["torch"]
src = ["metal/act.mm"]
)";
  util::DiagnosticCollector sink;
  const auto result = upgrade_build_toml_text(v1, "build.toml", sink, {.license = "Apache-2.0"});
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->source_edition, 1);
  EXPECT_EQ(result->method, UpgradeMethod::edited);
  EXPECT_EQ(result->text, R"(# A v1 kernel
[general]
name = "activation"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cuda", "metal", "rocm"]

[torch]
src = ["torch-ext/torch_binding.cpp"]

# Activation kernels
[kernel.activation]
backend = "cuda"  # built for ROCm as well
cuda-capabilities = ["8.0", "9.0"]
depends = ["torch"]
src = ["activation/act.cu"]

[kernel.activation_rocm]
backend = "rocm"
depends = ["torch"]
rocm-archs = ["gfx942"]
src = ["activation/act.cu"]

[kernel.metal_act]
backend = "metal"
depends = ["torch"]
src = ["metal/act.mm"]
)");
  auto expected = read(v1)->config;
  expected.general.license = "Apache-2.0";
  EXPECT_EQ(read(result->text)->config, expected);
}

TEST(EditionUpgrade, EditionTwoMovesCudaKeysToGeneralCuda) {
  const std::string v2 = R"([general]
name = "rotary"
universal = false
cuda-minver = "11.8"
python-depends = ["einops", "nvidia-cutlass-dsl"]

[general.hub]
repo-id = "kernels-community/rotary"

[torch]
src = ["torch-ext/torch_binding.cpp"]
minver = "2.5"

[kernel.rotary]
backend = "cuda"
depends = ["torch"]
src = ["rotary/rotary.cu"]
)";
  util::DiagnosticCollector sink;
  const auto result = upgrade_build_toml_text(v2, "build.toml", sink, {.license = "MIT"});
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->source_edition, 2);
  EXPECT_EQ(result->method, UpgradeMethod::edited);
  EXPECT_EQ(result->text, R"([general]
name = "rotary"
version = 1
edition = 5
license = "MIT"
backends = ["cuda"]
python-depends = ["einops"]

[general.cuda]
minver = "11.8"
python-depends = ["nvidia-cutlass-dsl"]

[general.hub]
repo-id = "kernels-community/rotary"

[torch]
src = ["torch-ext/torch_binding.cpp"]
minver = "2.5"

[kernel.rotary]
backend = "cuda"
depends = ["torch"]
src = ["rotary/rotary.cu"]
)");
  auto expected = read(v2)->config;
  expected.general.license = "MIT";
  EXPECT_EQ(read(result->text)->config, expected);
}

TEST(EditionUpgrade, UniversalKernelsBecomeTorchNoarch) {
  const std::string v2 =
      "[general]\nname = \"act\"\nuniversal = true\n\n[torch]\n"
      "pyext = [\"py\", \"json\"]\nsrc = []\n";
  util::DiagnosticCollector sink;
  const auto result = upgrade_build_toml_text(v2, "build.toml", sink, {.license = "MIT"});
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->text,
            "[general]\nname = \"act\"\nversion = 1\nedition = 5\nlicense = \"MIT\"\n"
            "backends = [\"cann\", \"cpu\", \"cuda\", \"metal\", \"neuron\", \"rocm\", \"xpu\"]\n\n"
            "[torch-noarch]\npyext = [\"py\", \"json\"]\n");
  EXPECT_TRUE(std::holds_alternative<TorchNoarch>(read(result->text)->config.framework));

  const std::string v1 =
      "[general]\nname = \"act\"\n[torch]\nuniversal = true\ninclude = [\".\"]\n";
  const auto v1_result = upgrade_build_toml_text(v1, "build.toml", sink, {.license = "MIT"});
  ASSERT_TRUE(v1_result.has_value()) << v1_result.error().message;
  EXPECT_EQ(v1_result->source_edition, 1);
  EXPECT_NE(v1_result->text.find("[torch-noarch]\n"), std::string::npos) << v1_result->text;
  EXPECT_EQ(v1_result->text.find("universal"), std::string::npos) << v1_result->text;
}

TEST(EditionUpgrade, HistoricEditionsWithoutLicenseNameTheOption) {
  const std::string v1 = "[general]\nname = \"act\"\n[torch]\nuniversal = true\n";
  util::DiagnosticCollector sink;
  ASSERT_FALSE(upgrade_build_toml_text(v1, "build.toml", sink).has_value());
  const auto diagnostics = sink.sorted();
  ASSERT_EQ(diagnostics.size(), 1U);
  EXPECT_EQ(diagnostics[0].message, "the `license` key is required in the `general` section");
  EXPECT_EQ(diagnostics[0].location, (util::SourceLocation{"build.toml", 1, 1}));
  EXPECT_NE(diagnostics[0].hint.find("--license Apache-2.0"), std::string::npos);
}

TEST(EditionUpgrade, ShapesTextEditsCannotExpressAreRewrittenWithAWarning) {
  // An inline [general] cannot lose a key by removing lines: the file is re-serialised.
  const std::string v2 =
      "# gone\ngeneral = { name = \"rotary\", cuda-minver = \"11.8\" }\n"
      "[torch]\nsrc = [\"b.cpp\"]\n[kernel.rotary]\nbackend = \"cuda\"\n"
      "depends = [\"torch\"]\nsrc = [\"r.cu\"]\n";
  util::DiagnosticCollector sink;
  const auto result = upgrade_build_toml_text(v2, "build.toml", sink, {.license = "MIT"});
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->method, UpgradeMethod::rewritten);
  EXPECT_EQ(result->text, R"([general]
name = "rotary"
version = 1
edition = 5
license = "MIT"
backends = ["cuda"]

[general.cuda]
minver = "11.8"

[torch]
src = ["b.cpp"]

[kernel.rotary]
backend = "cuda"
depends = ["torch"]
src = ["r.cu"]
)");
  ASSERT_EQ(sink.all().size(), 1U);
  EXPECT_EQ(sink.all()[0].severity, util::Severity::warning);
  EXPECT_EQ(sink.all()[0].message,
            "build.toml was re-serialised from edition 2: its comments and layout were not kept");
  util::DiagnosticCollector again;
  EXPECT_EQ(upgrade(result->text, again).method, UpgradeMethod::unchanged);
}

TEST(EditionUpgrade, EveryUpgradeIsIdempotent) {
  const std::vector<std::string> inputs = {
      k_v4,
      // Edition 3 has no stable-abi: without it and `version` the file is edition 3.
      replace(replace(k_v4, "version = 1 # bump on breaking changes\n", ""),
              "stable-abi = \"2.11\"\n", ""),
      replace(k_v4,
              "[torch]\nsrc = [\"torch-ext/torch_binding.cpp\", \"torch-ext/torch_binding.h\"]\n"
              "stable-abi = \"2.11\"\n",
              "")};
  for (const auto& input : inputs) {
    util::DiagnosticCollector sink;
    const auto once = upgrade(input, sink);
    EXPECT_NE(once.method, UpgradeMethod::unchanged) << input;
    expect_faithful(input, once.text);
  }
}

// Every variant of a few legacy files with one line deleted: the upgrade either fails with a
// diagnostic, or gives text that reads back as edition 5 with the reader's model of the input.
TEST(EditionUpgrade, LineDeletionSweepKeepsTheContract) {
  const std::vector<std::string> bases = {
      k_v4,
      "[general]\nname = \"a\"\nuniversal = false\ncuda-maxver = \"12.8\"\n"
      "python-depends = [\"nvidia-cutlass-dsl\"]\n[torch]\nsrc = [\"b.cpp\"]\nmaxver = \"2.9\"\n"
      "[kernel.k]\nbackend = \"cuda\"\ndepends = [\"torch\"]\nsrc = [\"k.cu\"]\n",
      "[general]\nname = \"a\"\n[torch]\nuniversal = false\nsrc = [\"b.cpp\"]\n[kernel.k]\n"
      "language = \"cuda-hipify\"\nrocm-archs = [\"gfx90a\"]\ndepends = [\"torch\"]\n"
      "src = [\"k.cu\"]\n[kernel.m]\nlanguage = \"metal\"\ndepends = []\nsrc = [\"m.mm\"]\n"};
  int upgraded = 0;
  for (const auto& base : bases) {
    std::size_t begin = 0;
    while (begin < base.size()) {
      const auto end = base.find('\n', begin) + 1;
      const auto variant = base.substr(0, begin) + base.substr(end);
      begin = end;
      util::DiagnosticCollector sink;
      const auto result = upgrade_build_toml_text(variant, "build.toml", sink, {.license = "MIT"});
      if (!result) {
        EXPECT_TRUE(sink.has_errors()) << variant;
        EXPECT_EQ(result.error().message.find("bug"), std::string::npos) << variant;
        continue;
      }
      ++upgraded;
      util::DiagnosticCollector quiet;
      auto expected = read_build_config(variant, "build.toml", quiet);
      auto after = read_build_config(result->text, "build.toml", quiet);
      ASSERT_TRUE(expected && after) << variant << "\n---\n" << result->text;
      if (variant.find("license") == std::string::npos) {
        expected->config.general.license = "MIT";
      }
      EXPECT_EQ(after->source_edition, k_current_edition) << result->text;
      EXPECT_EQ(after->config, expected->config) << variant << "\n---\n" << result->text;
    }
  }
  EXPECT_GE(upgraded, 10);
}

TEST(EditionUpgrade, CanonicalOptionReserialisesEvenEditionFive) {
  const auto v5 = replace(k_v4, "license", "edition = 5\nlicense");
  util::DiagnosticCollector sink;
  const auto result = upgrade_build_toml_text(v5, "build.toml", sink, {.canonical = true});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->method, UpgradeMethod::rewritten);
  EXPECT_EQ(result->text.find('#'), std::string::npos);
  EXPECT_TRUE(result->text.starts_with("[general]\nname = \"relu\"\nversion = 1\nedition = 5\n"))
      << result->text;
  EXPECT_TRUE(sink.all().empty());  // asked for: no warning about the lost comments
  EXPECT_EQ(read(result->text)->config, read(v5)->config);
  const auto again = upgrade_build_toml_text(result->text, "build.toml", sink, {.canonical = true});
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->method, UpgradeMethod::unchanged);
  EXPECT_EQ(again->text, result->text);
}
