// SPDX-License-Identifier: Apache-2.0
#include <string>

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <kernelhub/config/toml_text_editor.hpp>

using kernelhub::config::TomlTextEditor;

namespace {

const toml::table& table(const toml::table& root, std::string_view path) {
  return *root.at_path(path).as_table();
}

}  // namespace

TEST(TomlTextEditor, PositionsCountCodePointsNotBytes) {
  // toml++ columns count code points: "é" and "ü" are two bytes each.
  const std::string text = "[a]\nname = \"é\" # ü\nsrc = [\"ü\", \"x\"] # keep\n";
  const auto root = toml::parse(text);
  TomlTextEditor editor(text, root);
  EXPECT_TRUE(editor.insert_after(table(root, "a"), "name", "version", "1"));
  EXPECT_TRUE(editor.replace_value(table(root, "a"), "src", "[]"));
  EXPECT_EQ(editor.value_text(table(root, "a"), "name"), "\"é\"");
  EXPECT_EQ(editor.result(), "[a]\nname = \"é\" # ü\nversion = 1\nsrc = [] # keep\n");
}

TEST(TomlTextEditor, RemovesWholeLinesOfMultiLineValues) {
  const std::string text = "[a]\nx = [\n  1, # one\n  2,\n]\ny = 2\n";
  const auto root = toml::parse(text);
  TomlTextEditor editor(text, root);
  EXPECT_EQ(editor.value_text(table(root, "a"), "x"), "[\n  1, # one\n  2,\n]");
  EXPECT_TRUE(editor.remove(table(root, "a"), "x"));
  EXPECT_EQ(editor.result(), "[a]\ny = 2\n");
}

TEST(TomlTextEditor, ReplacesAnEntryKeepingItsComment) {
  const std::string text = "[k]\n  language = \"metal\" # why\n";
  const auto root = toml::parse(text);
  TomlTextEditor editor(text, root);
  EXPECT_TRUE(editor.replace_entry(table(root, "k"), "language", "backend", "\"metal\""));
  EXPECT_EQ(editor.result(), "[k]\n  backend = \"metal\" # why\n");
}

TEST(TomlTextEditor, OnlyRenamesATablesOwnHeader) {
  // [torch] exists only through [torch.stable-abi]: its region is that header's.
  const std::string implicit = "[torch.stable-abi]\ncuda = \"2.11\"\n";
  const auto implicit_root = toml::parse(implicit);
  TomlTextEditor refused(implicit, implicit_root);
  EXPECT_FALSE(refused.rename_header(table(implicit_root, "torch"), "torch", "torch-noarch"));
  EXPECT_FALSE(refused.insert_first(table(implicit_root, "torch"), "src", "[]"));

  const std::string text = "[ torch ] # ext\nsrc = []\n";
  const auto root = toml::parse(text);
  TomlTextEditor editor(text, root);
  EXPECT_FALSE(editor.rename_header(table(root, "torch"), "tvm-ffi", "torch-noarch"));
  EXPECT_TRUE(editor.rename_header(table(root, "torch"), "torch", "torch-noarch"));
  EXPECT_EQ(editor.result(), "[torch-noarch] # ext\nsrc = []\n");
}

TEST(TomlTextEditor, NewTablesGoAboveTheNextHeadersComments) {
  const std::string text =
      "[general]\nname = \"x\"\n# about hub\n[general.hub]\nrepo-id = \"r\"\n"
      "[kernel.k]\nsrc = []";
  const auto root = toml::parse(text);
  TomlTextEditor editor(text, root);
  EXPECT_TRUE(
      editor.insert_table_after(table(root, "general"), "general.cuda", {{"minver", "\"12\""}}));
  editor.insert_table_before_kernels("torch-noarch", {});
  EXPECT_EQ(editor.result(),
            "[general]\nname = \"x\"\n\n[general.cuda]\nminver = \"12\"\n\n# about hub\n"
            "[general.hub]\nrepo-id = \"r\"\n\n[torch-noarch]\n\n[kernel.k]\nsrc = []");
}

TEST(TomlTextEditor, AppendsAtTheEndWithOneBlankLine) {
  for (const std::string text : {"[a]\nx = 1", "[a]\nx = 1\n", "[a]\nx = 1\n\n"}) {
    const auto root = toml::parse(text);
    TomlTextEditor editor(text, root);
    editor.insert_table_before_kernels("b", {{"y", "2"}});
    EXPECT_EQ(editor.result(), "[a]\nx = 1\n\n[b]\ny = 2\n") << text;
  }
}

TEST(TomlTextEditor, InlineTablesGetCommasAndRefuseRemovals) {
  const std::string text = "g = { name = \"x\", v = 1 }\n";
  const auto root = toml::parse(text);
  TomlTextEditor editor(text, root);
  EXPECT_TRUE(editor.insert_after(table(root, "g"), "name", "edition", "5"));
  EXPECT_FALSE(editor.remove(table(root, "g"), "v"));
  EXPECT_FALSE(editor.insert_first(table(root, "g"), "k", "1"));
  EXPECT_EQ(editor.result(), "g = { name = \"x\", edition = 5, v = 1 }\n");
}

TEST(TomlTextEditor, OverlappingEditsGiveNoResult) {
  const std::string text = "[a]\nx = 1\n";
  const auto root = toml::parse(text);
  TomlTextEditor editor(text, root);
  EXPECT_TRUE(editor.replace_value(table(root, "a"), "x", "2"));
  EXPECT_TRUE(editor.remove(table(root, "a"), "x"));
  EXPECT_EQ(editor.result(), std::nullopt);
  EXPECT_FALSE(editor.remove(table(root, "a"), "missing"));
}
