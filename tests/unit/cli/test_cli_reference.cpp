// SPDX-License-Identifier: Apache-2.0
// The reference generator walks a real CLI11 app; these tests give it a small fake program
// whose declarations exercise every kind of option the generator must describe.
#include <array>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <kernelhub/cli/cli_reference.hpp>

using namespace kernelhub::cli;

namespace {

void declare_build(CLI::App& app, RunState& /*state*/) {
  auto* sub = app.add_subcommand("build");
  static std::string dir = ".";
  static std::string variant;
  static std::vector<std::string> backends;
  static bool quiet = false;
  static int jobs = 4;
  static std::string secret;
  sub->add_option("KERNEL_DIR", dir, "kernel directory")->capture_default_str();
  sub->add_option("--variant", variant, "the variant | to build")->required();
  sub->add_option("-b,--backend", backends, "backends to build")
      ->check(CLI::IsMember({"cuda", "rocm", "cpu"}));
  auto* quiet_flag = sub->add_flag("-q,--quiet", quiet, "print less");
  sub->add_option("-j,--jobs", jobs, "parallel jobs")
      ->capture_default_str()
      ->check(CLI::Range(1, 64))
      ->envname("KH_JOBS")
      ->excludes(quiet_flag);
  sub->add_option("--secret", secret, "not for users")->group("");
}

void declare_skills(CLI::App& app, RunState& /*state*/) {
  auto* sub = app.add_subcommand("skills");
  sub->require_subcommand(1);
  static std::string skill;
  sub->add_subcommand("add", "add a skill")->add_option("SKILL", skill, "the skill")->required();
  sub->add_subcommand("internal", "not shown")->group("");
}

void declare_hidden(CLI::App& app, RunState& /*state*/) { app.add_subcommand("hidden"); }

const std::array k_commands = {
    Command{"build", "build the kernel", &declare_build},
    Command{"skills", "manage skills", &declare_skills},
    Command{"hidden", "never documented", &declare_hidden, /*hidden=*/true},
};

const Program k_program{"fake", "A fake program", k_commands};

const ArgumentDoc* find_option(const CommandDoc& command, const std::string& name) {
  for (const auto& option : command.options) {
    for (const auto& option_name : option.names) {
      if (option_name == name) {
        return &option;
      }
    }
  }
  return nullptr;
}

}  // namespace

TEST(CliReference, CommandsFollowTheTableAndSkipHiddenOnes) {
  const auto doc = describe_program(k_program);
  EXPECT_EQ(doc.path, "fake");
  EXPECT_EQ(doc.synopsis, "A fake program");
  EXPECT_EQ(doc.usage, "fake [OPTIONS] [COMMAND]");
  ASSERT_EQ(doc.subcommands.size(), 2U);
  EXPECT_EQ(doc.subcommands[0].path, "fake build");
  EXPECT_EQ(doc.subcommands[0].synopsis, "build the kernel");
  EXPECT_EQ(doc.subcommands[1].path, "fake skills");
  ASSERT_EQ(doc.subcommands[1].subcommands.size(), 1U);
  EXPECT_EQ(doc.subcommands[1].subcommands[0].path, "fake skills add");
  EXPECT_EQ(doc.subcommands[1].usage, "fake skills <COMMAND>");
  EXPECT_EQ(doc.subcommands[1].subcommands[0].usage, "fake skills add <SKILL>");
}

TEST(CliReference, OptionsCarryTheirDeclaredProperties) {
  const auto doc = describe_program(k_program);
  const auto& build = doc.subcommands[0];
  EXPECT_EQ(build.usage, "fake build [OPTIONS] [KERNEL_DIR]");

  ASSERT_EQ(build.positionals.size(), 1U);
  EXPECT_EQ(build.positionals[0].names, std::vector<std::string>{"KERNEL_DIR"});
  EXPECT_EQ(build.positionals[0].default_value, ".");
  EXPECT_FALSE(build.positionals[0].required);

  // --help is implied for every command and the hidden --secret is left out.
  EXPECT_EQ(build.options.size(), 4U);
  EXPECT_EQ(find_option(build, "--help"), nullptr);
  EXPECT_EQ(find_option(build, "--secret"), nullptr);

  const auto* variant = find_option(build, "--variant");
  ASSERT_NE(variant, nullptr);
  EXPECT_TRUE(variant->required);
  EXPECT_EQ(variant->value_name, "TEXT");

  const auto* backend = find_option(build, "--backend");
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->names, (std::vector<std::string>{"-b", "--backend"}));
  EXPECT_EQ(backend->allowed_values, (std::vector<std::string>{"cuda", "rocm", "cpu"}));
  EXPECT_TRUE(backend->repeatable);

  const auto* quiet = find_option(build, "-q");
  ASSERT_NE(quiet, nullptr);
  EXPECT_TRUE(quiet->flag);
  EXPECT_TRUE(quiet->value_name.empty());
  EXPECT_TRUE(quiet->default_value.empty());

  const auto* jobs = find_option(build, "--jobs");
  ASSERT_NE(jobs, nullptr);
  EXPECT_EQ(jobs->default_value, "4");
  EXPECT_EQ(jobs->environment, "KH_JOBS");
  EXPECT_EQ(jobs->excludes, std::vector<std::string>{"--quiet"});
  ASSERT_EQ(jobs->checks.size(), 1U);
  EXPECT_NE(jobs->checks[0].find("64"), std::string::npos);
}

TEST(CliReference, MarkdownHasOneSectionPerCommandAndEscapesTableCells) {
  const std::vector programs = {describe_program(k_program)};
  const auto markdown = render_markdown(programs);
  EXPECT_NE(markdown.find("## `fake`\n"), std::string::npos);
  EXPECT_NE(markdown.find("### `fake build`\n"), std::string::npos);
  EXPECT_NE(markdown.find("#### `fake skills add`\n"), std::string::npos);
  EXPECT_NE(markdown.find("- [`fake build`](#fake-build): build the kernel\n"), std::string::npos);
  EXPECT_NE(markdown.find("| `-b, --backend <TEXT>...` | backends to build. One of: `cuda`, "
                          "`rocm`, `cpu`. |"),
            std::string::npos);
  EXPECT_NE(markdown.find("the variant \\| to build. Required."), std::string::npos);
  EXPECT_NE(markdown.find("| `[KERNEL_DIR]` | kernel directory. Default: `.`. |"),
            std::string::npos);
  EXPECT_EQ(markdown.find("hidden"), std::string::npos);
  EXPECT_EQ(markdown.find("secret"), std::string::npos);
  EXPECT_EQ(markdown.find("internal"), std::string::npos);
  // One trailing newline: the file ends cleanly whatever section comes last.
  ASSERT_GE(markdown.size(), 2U);
  EXPECT_EQ(markdown.back(), '\n');
  EXPECT_NE(markdown[markdown.size() - 2], '\n');
}

TEST(CliReference, JsonMirrorsTheModel) {
  const std::vector programs = {describe_program(k_program)};
  const auto json = nlohmann::json::parse(render_json(programs));
  ASSERT_EQ(json["programs"].size(), 1U);
  const auto& build = json["programs"][0]["commands"][0];
  EXPECT_EQ(build["path"], "fake build");
  EXPECT_EQ(build["positionals"][0]["names"][0], "KERNEL_DIR");
  EXPECT_EQ(build["options"].size(), 4U);
  EXPECT_EQ(json["programs"][0]["commands"][1]["commands"][0]["path"], "fake skills add");
}

TEST(CliReference, RealProgramsHideGenerateDocs) {
  const auto programs = describe_all_programs();
  ASSERT_EQ(programs.size(), 2U);
  EXPECT_EQ(programs[0].path, "kernel-builder");
  EXPECT_EQ(programs[1].path, "kernelhub");
  for (const auto& program : programs) {
    for (const auto& command : program.subcommands) {
      EXPECT_NE(command.path, program.path + " generate-docs");
    }
  }
}
