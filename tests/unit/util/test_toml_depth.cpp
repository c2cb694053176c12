// SPDX-License-Identifier: Apache-2.0
// The pre-parse depth guard for TOML (issue 12, item 12).
#include <kernelhub/util/toml_depth.hpp>

#include <string>

#include <gtest/gtest.h>

namespace kernelhub::util {
namespace {

std::string dotted_key(std::size_t parts) {
  std::string key = "k";
  for (std::size_t i = 1; i < parts; ++i) {
    key += ".k";
  }
  return key;
}

TEST(TomlDepth, RealFilesPass) {
  const std::string build_toml = R"([general]
name = "relu"
backends = ["cpu", "cuda"]
version = 1.5

[kernel.relu]
backend = "cuda"
src = ["relu/relu.cu", 'relu/a.b.c.h']
depends = [ "torch" ]
inline = { a.b = 1, c = [1.0, 2.5, { d.e = "x.y.z" }] }

[[kernel.list.items]]
"quoted.key".'lit.key' = """multi
line . . . . with dots"""
)";
  EXPECT_FALSE(find_over_deep_toml(build_toml));
  EXPECT_TRUE(check_toml_depth(build_toml, "build.toml"));
}

TEST(TomlDepth, DotsInValuesAreNotKeyParts) {
  std::string floats = "x = [";
  for (int i = 0; i < 1000; ++i) {
    floats += "1.5, ";
  }
  floats += "2.5]\nversion = \"" + dotted_key(500) + "\"\n";
  EXPECT_FALSE(find_over_deep_toml(floats));
}

TEST(TomlDepth, ADottedKeyOfFiftyThousandPartsIsLocated) {
  const std::string text = "[tool]\nname = 1\n  " + dotted_key(50000) + " = 1\n";
  const auto problem = find_over_deep_toml(text);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->line, 3u);
  EXPECT_EQ(problem->column, 3u);
  const auto checked = check_toml_depth(text, "pyproject.toml");
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().message.rfind("pyproject.toml:3:3: ", 0), 0u) << checked.error().message;
}

TEST(TomlDepth, TheLimitCountsHeaderKeyAndInlineTablesTogether) {
  // 40 + 40 + 30 = 110 levels, each part well under the limit on its own.
  const std::string text = "[" + dotted_key(40) + "]\nx = 1\n" + dotted_key(40) + " = { " +
                           dotted_key(30) + " = 1 }\n";
  const auto problem = find_over_deep_toml(text);
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->line, 3u);
  EXPECT_GT(problem->depth, k_max_toml_depth);
  EXPECT_FALSE(find_over_deep_toml(text, 200));
}

TEST(TomlDepth, DeepHeadersAndQuotedPartsCount) {
  std::string quoted = "\"a\"";
  for (int i = 0; i < 200; ++i) {
    quoted += " . 'b'";
  }
  EXPECT_TRUE(find_over_deep_toml(quoted + " = 1\n"));
  EXPECT_TRUE(find_over_deep_toml("[[" + dotted_key(150) + "]]\n"));
  EXPECT_FALSE(find_over_deep_toml("[[" + dotted_key(99) + "]]\n"));
  EXPECT_TRUE(find_over_deep_toml("x = " + std::string(300, '[') + std::string(300, ']') + "\n"));
}

TEST(TomlDepth, StringsAndCommentsHideTheirDots) {
  const std::string text = "# " + dotted_key(500) + "\n" + "a = '" + dotted_key(500) + "'\n" +
                           "b = \"\"\"\n" + dotted_key(500) + " = 1\n\"\"\"\n";
  EXPECT_FALSE(find_over_deep_toml(text));
}

}  // namespace
}  // namespace kernelhub::util
