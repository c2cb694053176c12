// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <kernelhub/builder/torch_versions_env.hpp>

namespace kernelhub::builder {
namespace {

namespace fs = std::filesystem;

variants::ReleaseVersion release_of(std::string_view text) {
  return variants::ReleaseVersion::parse(text).value();
}

// Plays python and pip: `-m venv DIR` makes DIR/bin/python and a site-packages folder, the
// purelib probe prints the interpreter's site-packages, the import probe succeeds when
// `imports` says so.
class FakeEnvRunner final : public CommandRunner {
 public:
  fs::path base_site = fs::absolute("base/site-packages");
  bool imports = true;
  bool uv_fails = false;
  std::optional<fs::path> uv_on_path;
  std::vector<Command> runs;

  util::Expected<int> run(const Command& command) override {
    runs.push_back(command);
    if (uv_fails && fs::path(command.argv.front()).filename() == "uv") {
      return 2;
    }
    if (command.argv.size() == 4 && command.argv[2] == "venv") {
      fs::create_directories(fs::path(command.argv[3]) / "bin");
      fs::create_directories(site_of(fs::path(command.argv[3]) / "bin" / "python"));
      std::ofstream(fs::path(command.argv[3]) / "bin" / "python") << "";
    }
    return 0;
  }
  std::optional<std::string> capture(const Command& command) override {
    runs.push_back(command);
    const auto& script = command.argv.back();
    if (script.find("sysconfig") != std::string::npos) {
      return site_of(command.argv.front()).string() + "\n";
    }
    return imports ? std::optional<std::string>("2.14.1+cu130\n") : std::nullopt;
  }
  std::optional<fs::path> find_program(const std::string& name) override {
    return name == "uv" ? uv_on_path : std::nullopt;
  }

  fs::path site_of(const fs::path& python) const {
    if (python == "/base/python") {
      return base_site;
    }
    return python.parent_path().parent_path() / "lib" / "site-packages";
  }

  bool ran(std::string_view word) const {
    return std::any_of(runs.begin(), runs.end(), [&](const Command& command) {
      return std::find(command.argv.begin(), command.argv.end(), word) != command.argv.end();
    });
  }
};

TEST(TorchVersionsEnv, LayoutIsOneFolderPerRelease) {
  const auto layout = torch_env_layout("/cache/torch-envs", release_of("2.14"));
  EXPECT_EQ(layout.dir, fs::path("/cache/torch-envs/2.14"));
  EXPECT_EQ(layout.python, fs::path("/cache/torch-envs/2.14/bin/python"));
  EXPECT_EQ(layout.ready, fs::path("/cache/torch-envs/2.14/.kernelhub-ready"));
  EXPECT_EQ(layout.lock, fs::path("/cache/torch-envs/2.14.lock"));
  EXPECT_EQ(torch_requirement(release_of("2.14")), "torch==2.14.*");
}

TEST(TorchVersionsEnv, RootFollowsXdgCacheHome) {
  const char* saved = std::getenv("XDG_CACHE_HOME");
  const std::optional<std::string> previous = saved ? std::optional<std::string>(saved) : std::nullopt;
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(torch_envs_root(), fs::path("/xdg/kernelhub/torch-envs"));
  if (previous) {
    setenv("XDG_CACHE_HOME", previous->c_str(), 1);
  } else {
    unsetenv("XDG_CACHE_HOME");
  }
}

TEST(TorchVersionsEnv, LeanCommandsInstallTorchWithoutItsCudaWheels) {
  const auto layout = torch_env_layout("/c", release_of("2.14"));
  const auto commands = lean_torch_env_commands(layout, "/base/python", release_of("2.14"), {});
  ASSERT_EQ(commands.size(), 3U);
  EXPECT_EQ(commands[0].argv, (std::vector<std::string>{"/base/python", "-m", "venv", "/c/2.14"}));
  EXPECT_EQ(commands[1].argv.front(), "/c/2.14/bin/python");
  EXPECT_NE(std::find(commands[1].argv.begin(), commands[1].argv.end(), "--no-deps"),
            commands[1].argv.end());
  EXPECT_EQ(commands[1].argv.back(), "torch==2.14.*");
  EXPECT_NE(std::find(commands[1].argv.begin(), commands[1].argv.end(), "off"),
            commands[1].argv.end());
  EXPECT_NE(std::find(commands[2].argv.begin(), commands[2].argv.end(), "sympy"),
            commands[2].argv.end());
  const auto with_progress =
      lean_torch_env_commands(layout, "/base/python", release_of("2.14"), {std::nullopt, true, {}});
  EXPECT_EQ(std::find(with_progress[1].argv.begin(), with_progress[1].argv.end(), "--progress-bar"),
            with_progress[1].argv.end());
}

TEST(TorchVersionsEnv, MakesALeanEnvironmentBorrowingTheCudaLibraries) {
  FakeEnvRunner runner;
  fs::create_directories(runner.base_site / "nvidia");
  const auto root = fs::absolute("envs");
  const auto python = ensure_torch_env(root, release_of("2.14"), "/base/python", runner);
  ASSERT_TRUE(python.has_value()) << python.error().message;
  EXPECT_EQ(*python, root / "2.14" / "bin" / "python");
  EXPECT_TRUE(runner.ran("--no-deps"));
  const auto link = root / "2.14" / "lib" / "site-packages" / "nvidia";
  ASSERT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::read_symlink(link), runner.base_site / "nvidia");
  EXPECT_TRUE(fs::exists(root / "2.14" / ".kernelhub-ready"));

  // Made once: a second call runs nothing.
  runner.runs.clear();
  ASSERT_TRUE(ensure_torch_env(root, release_of("2.14"), "/base/python", runner).has_value());
  EXPECT_TRUE(runner.runs.empty());
}

TEST(TorchVersionsEnv, AHalfMadeEnvironmentIsMadeAgain) {
  FakeEnvRunner runner;
  const auto root = fs::absolute("envs");
  fs::create_directories(root / "2.14" / "leftover");
  ASSERT_TRUE(ensure_torch_env(root, release_of("2.14"), "/base/python", runner).has_value());
  EXPECT_FALSE(fs::exists(root / "2.14" / "leftover"));
  // No nvidia/ to borrow: torch is installed with its dependencies.
  EXPECT_FALSE(runner.ran("--no-deps"));
  EXPECT_TRUE(runner.ran("torch==2.14.*"));
}

TEST(TorchVersionsEnv, ATorchThatStillCannotImportIsAnError) {
  FakeEnvRunner runner;
  runner.imports = false;
  const auto result =
      ensure_torch_env(fs::absolute("envs"), release_of("2.14"), "/base/python", runner);
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().message.find("cannot be imported"), std::string::npos);
  EXPECT_FALSE(fs::exists(fs::absolute("envs") / "2.14" / ".kernelhub-ready"));
}

TEST(TorchVersionsEnv, UvInstallsIntoTheEnvironmentWithPipsIndexSettings) {
  const auto layout = torch_env_layout("/c", release_of("2.14"));
  const std::map<std::string, std::string> env = {
      {"PIP_INDEX_URL", "https://mirror.example/simple"},
      {"PIP_FIND_LINKS", "/opt/wheels /srv/more"}};
  const TorchEnvInstaller uv{fs::path("/tools/uv"), false,
                             [&](std::string_view name) -> std::optional<std::string> {
                               const auto found = env.find(std::string(name));
                               return found == env.end() ? std::nullopt
                                                         : std::optional(found->second);
                             }};
  const auto commands = lean_torch_env_commands(layout, "/base/python", release_of("2.14"), uv);
  // The venv is still made by the base Python, with pip in it for a step uv cannot do.
  EXPECT_EQ(commands[0].argv, (std::vector<std::string>{"/base/python", "-m", "venv", "/c/2.14"}));
  EXPECT_EQ(commands[1].argv,
            (std::vector<std::string>{"/tools/uv", "pip", "install", "--python", "/c/2.14/bin/python",
                                      "--compile-bytecode", "--no-progress", "--index-url",
                                      "https://mirror.example/simple", "--find-links", "/opt/wheels",
                                      "--find-links", "/srv/more", "--no-deps", "torch==2.14.*"}));
  EXPECT_EQ(commands[2].argv.front(), "/tools/uv");
  EXPECT_NE(std::find(commands[2].argv.begin(), commands[2].argv.end(), "sympy"),
            commands[2].argv.end());
}

TEST(TorchVersionsEnv, UvBesideTheBasePythonComesBeforeUvOnPath) {
  FakeEnvRunner runner;
  runner.uv_on_path = "/usr/bin/uv";
  const auto venv_bin = fs::absolute("venv-with-uv") / "bin";
  fs::create_directories(venv_bin);
  std::ofstream(venv_bin / "uv") << "#!/bin/sh\n";
  fs::permissions(venv_bin / "uv", fs::perms::owner_all);
  EXPECT_EQ(find_uv(venv_bin / "python", runner), venv_bin / "uv");
  EXPECT_EQ(find_uv("/base/python", runner), fs::path("/usr/bin/uv"));
  setenv("KERNELHUB_NO_UV", "1", 1);
  EXPECT_EQ(find_uv(venv_bin / "python", runner), std::nullopt);
  unsetenv("KERNELHUB_NO_UV");
}

TEST(TorchVersionsEnv, AStepUvCannotDoIsDoneAgainWithPip) {
  FakeEnvRunner runner;
  runner.uv_on_path = "/usr/bin/uv";
  runner.uv_fails = true;
  fs::create_directories(runner.base_site / "nvidia");
  const auto root = fs::absolute("envs-uv");
  const auto python = ensure_torch_env(root, release_of("2.14"), "/base/python", runner);
  ASSERT_TRUE(python.has_value()) << python.error().message;
  // Each install step: uv first, then the environment's pip.
  std::vector<std::string> installers;
  for (const auto& command : runner.runs) {
    if (std::find(command.argv.begin(), command.argv.end(), "install") != command.argv.end()) {
      installers.push_back(fs::path(command.argv.front()).filename().string());
    }
  }
  EXPECT_EQ(installers, (std::vector<std::string>{"uv", "python", "uv", "python"}));
  EXPECT_TRUE(fs::exists(root / "2.14" / ".kernelhub-ready"));
}

}  // namespace
}  // namespace kernelhub::builder
