// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <kernelhub/builder/probe_cache.hpp>

#include "../test_support.hpp"

namespace kernelhub::builder {
namespace {

namespace fs = std::filesystem;

// Answers the locate script with a fake torch under torch/, and the probe with a counter.
struct FakeRunner final : CommandRunner {
  int probes = 0;
  bool has_torch = true;
  util::Expected<int> run(const Command&) override { return 0; }
  std::optional<std::string> capture(const Command& command) override {
    const auto& script = command.argv.at(2);
    if (script.find("find_spec(name)") != std::string::npos) {
      // The modules named after the script: each is <name>/__init__.py when that exists.
      std::string answer = (fs::current_path() / "python").string() + "\n";
      for (std::size_t i = 3; i < command.argv.size(); ++i) {
        const auto init = fs::current_path() / command.argv[i] / "__init__.py";
        const bool found = command.argv[i] == "torch" ? has_torch : fs::exists(init);
        answer += (found ? init.string() : std::string()) + "\n";
      }
      return answer;
    }
    ++probes;
    return "answer " + std::to_string(probes) + "\n";
  }
  std::optional<fs::path> find_program(const std::string& program) override { return program; }
};

using kernelhub::testing::write;

TEST(ProbeCache, AnswersFromTheCacheUntilTorchChanges) {
  write("python", "");
  write("torch/__init__.py", "");
  write("torch/version.py", "__version__ = '2.15.0'\n");
  FakeRunner runner;
  const std::optional<fs::path> cache = fs::path("cache");
  EXPECT_EQ(cached_probe("python", "probe()", runner, cache), "answer 1\n");
  EXPECT_EQ(cached_probe("python", "probe()", runner, cache), "answer 1\n");
  EXPECT_EQ(runner.probes, 1);
  // Another script is another entry.
  EXPECT_EQ(cached_probe("python", "other()", runner, cache), "answer 2\n");

  write("torch/version.py", "__version__ = '2.16.0+cpu'\n");  // a reinstall
  EXPECT_EQ(cached_probe("python", "probe()", runner, cache), "answer 3\n");
  EXPECT_EQ(cached_probe("python", "probe()", runner, cache), "answer 3\n");
}

TEST(ProbeCache, NoCacheWithoutAFolderOrATorch) {
  write("python", "");
  FakeRunner runner;
  runner.has_torch = false;
  EXPECT_EQ(cached_probe("python", "probe()", runner, fs::path("cache")), "answer 1\n");
  EXPECT_EQ(cached_probe("python", "probe()", runner, fs::path("cache")), "answer 2\n");
  runner.has_torch = true;
  write("torch/__init__.py", "");
  EXPECT_EQ(cached_probe("python", "probe()", runner, std::nullopt), "answer 3\n");
  EXPECT_EQ(cached_probe("python", "probe()", runner, std::nullopt), "answer 4\n");
  EXPECT_FALSE(fs::exists("cache"));
}

TEST(ProbeCache, ModulesFingerprintNamesMissingModulesAndSeesReinstalls) {
  write("python", "");
  write("torch/__init__.py", "");
  write("kernels/__init__.py", "");
  FakeRunner runner;
  const auto both = modules_fingerprint("python", {"torch", "kernels"}, runner);
  ASSERT_TRUE(both.has_value());
  EXPECT_NE(both->find("kernels\n"), std::string::npos);
  EXPECT_EQ(both->find("kernels missing"), std::string::npos);
  EXPECT_EQ(both->find("torch missing"), std::string::npos);
  EXPECT_EQ(modules_fingerprint("python", {"torch", "kernels"}, runner), both);

  write("kernels/version.py", "__version__ = '0.18.0'\n");  // an upgrade adds or touches files
  const auto upgraded = modules_fingerprint("python", {"torch", "kernels"}, runner);
  ASSERT_TRUE(upgraded.has_value());
  EXPECT_NE(upgraded, both);

  const auto absent = modules_fingerprint("python", {"torch", "triton"}, runner);
  ASSERT_TRUE(absent.has_value());
  EXPECT_NE(absent->find("triton missing\n"), std::string::npos);
}

}  // namespace
}  // namespace kernelhub::builder
