// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <string>

#include <kernelhub/cli/completion_script.hpp>

namespace kernelhub::cli {
namespace {

ArgumentDoc option(std::vector<std::string> names, std::string description, bool flag,
                   std::vector<std::string> allowed = {}) {
  ArgumentDoc doc;
  doc.names = std::move(names);
  doc.description = std::move(description);
  doc.flag = flag;
  doc.value_name = flag ? "" : "TEXT";
  doc.allowed_values = std::move(allowed);
  return doc;
}

// A two-command program whose descriptions hold every character the scripts must escape.
CommandDoc program() {
  CommandDoc root;
  root.path = "tool";
  root.options.push_back(option({"-V", "--version"}, "show the version", true));
  CommandDoc build;
  build.path = "tool build";
  build.synopsis = "build the kernel's variants";
  build.options.push_back(option({"--mode"}, "how [strict: yes]", false, {"warn", "error"}));
  build.options.push_back(option({"--python"}, "the interpreter", false));
  build.options.back().repeatable = true;
  build.options.push_back(option({"-v", "--verbose"}, "say more", true));
  build.positionals.push_back(option({"DIR"}, "the folder", false));
  CommandDoc hash;
  hash.path = "tool hash";
  hash.synopsis = "print digests";
  root.subcommands = {build, hash};
  return root;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CompletionScript, ParsesTheThreeShells) {
  EXPECT_EQ(parse_shell("bash"), Shell::bash);
  EXPECT_EQ(parse_shell("zsh"), Shell::zsh);
  EXPECT_EQ(parse_shell("fish"), Shell::fish);
  EXPECT_FALSE(parse_shell("powershell").has_value());
}

TEST(CompletionScript, BashListsCommandsOptionsAndAllowedValues) {
  const auto script = completion_script(program(), Shell::bash);
  EXPECT_TRUE(contains(script, "compgen -W \"build hash\" -- \"$cur\"")) << script;
  EXPECT_TRUE(contains(script, "options=\"-V --version -h --help\"")) << script;
  EXPECT_TRUE(contains(script, "        --mode) COMPREPLY=($(compgen -W \"warn error\" -- "
                               "\"$cur\")); return 0 ;;\n"))
      << script;
  EXPECT_TRUE(contains(script, "        --python) return 0 ;;\n")) << script;
  EXPECT_TRUE(contains(script, "options=\"--mode --python -v --verbose -h --help\"")) << script;
  EXPECT_TRUE(contains(script, "complete -o default -F _tool tool\n")) << script;
}

TEST(CompletionScript, ZshEscapesDescriptionsAndMarksRepeatableOptions) {
  const auto script = completion_script(program(), Shell::zsh);
  EXPECT_TRUE(script.starts_with("#compdef tool\n")) << script;
  EXPECT_TRUE(contains(script, "    'build:build the kernel'\\''s variants'\n")) << script;
  EXPECT_TRUE(contains(script, "'--mode[how \\[strict\\: yes\\]]:TEXT:(warn error)'")) << script;
  EXPECT_TRUE(contains(script, "'*--python[the interpreter]:TEXT:_files'")) << script;
  EXPECT_TRUE(contains(script, "'-v[say more]'")) << script;
  EXPECT_TRUE(contains(script, "'*:file:_files'")) << script;  // build's DIR
  EXPECT_TRUE(contains(script, "  compdef _tool tool\n")) << script;
}

TEST(CompletionScript, FishGuardsEachCommandsOptions) {
  const auto script = completion_script(program(), Shell::fish);
  EXPECT_TRUE(contains(script, "complete -c tool -f -n __fish_use_subcommand -a build -d "
                               "'build the kernel\\'s variants'\n"))
      << script;
  EXPECT_TRUE(contains(script, "complete -c tool -n '__fish_seen_subcommand_from build' -l mode "
                               "-x -a 'warn error' -d 'how [strict: yes]'\n"))
      << script;
  EXPECT_TRUE(contains(script, "complete -c tool -n '__fish_seen_subcommand_from build' -s v -l "
                               "verbose -d 'say more'\n"))
      << script;
  EXPECT_TRUE(contains(script, "-l python -r -d 'the interpreter'\n")) << script;
}

TEST(CompletionScript, LongDescriptionsAreCutAtAWord) {
  auto root = program();
  root.subcommands[1].synopsis = std::string(30, 'a') + " " + std::string(30, 'b') + " " +
                                 std::string(30, 'c');
  const auto script = completion_script(root, Shell::fish);
  EXPECT_TRUE(contains(script, "-a hash -d '" + std::string(30, 'a') + " " +
                                   std::string(30, 'b') + "...'\n"))
      << script;
}

}  // namespace
}  // namespace kernelhub::cli
