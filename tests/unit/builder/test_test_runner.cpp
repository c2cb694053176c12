// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <kernelhub/builder/test_runner.hpp>

#include "../test_support.hpp"

namespace kernelhub::builder {
namespace {

namespace fs = std::filesystem;
using Names = std::vector<std::string>;

using kernelhub::testing::write;

variants::SystemInfo cpu_machine() {
  variants::SystemInfo system;
  system.torch_version = variants::ReleaseVersion::from_parts("2", "15");
  system.cxx11_abi = true;
  return system;
}

bool has_arg(const Command& command, std::string_view arg) {
  return std::find(command.argv.begin(), command.argv.end(), arg) != command.argv.end();
}

std::string env_value(const Command& command, std::string_view name) {
  for (const auto& [key, value] : command.env) {
    if (key == name) {
      return value;
    }
  }
  return "<unset>";
}

const variants::SystemBackend k_cpu{types::Backend::cpu, {}};
const variants::SystemBackend k_cu132{types::Backend::cuda,
                                      variants::ReleaseVersion::from_parts("13", "2")};

TEST(TestRunner, RunnableBackendsNeedTheirDevice) {
  using Backends = std::vector<variants::SystemBackend>;
  EXPECT_EQ(runnable_backends(k_cu132, true), (Backends{k_cu132, k_cpu}));
  // torch built with CUDA on a machine without a GPU runs cpu variants only.
  EXPECT_EQ(runnable_backends(k_cu132, false), (Backends{k_cpu}));
  EXPECT_EQ(runnable_backends(k_cpu, true), (Backends{k_cpu}));
  const variants::SystemBackend metal{types::Backend::metal, {}};
  EXPECT_EQ(runnable_backends(metal, false), (Backends{metal, k_cpu}));
}

TEST(TestRunner, DefaultVariantIsTheFirstRunnableBackendsBest) {
  const Names built = {"torch-cpu", "torch-cuda", "torch214-cxx11-cpu-x86_64-linux",
                       "torch215-cxx11-cpu-x86_64-linux", "torch215-cxx11-cu132-x86_64-linux"};
  const std::vector<variants::SystemBackend> cpu_only = {k_cpu};
  const std::vector<variants::SystemBackend> gpu = {k_cu132, k_cpu};
  // An arch build of this machine's torch beats noarch and other torch versions.
  EXPECT_EQ(choose_test_variant(built, cpu_machine(), cpu_only, std::nullopt).value(),
            "torch215-cxx11-cpu-x86_64-linux");
  // CUDA comes before CPU when the machine has it.
  EXPECT_EQ(choose_test_variant(built, cpu_machine(), gpu, std::nullopt).value(),
            "torch215-cxx11-cu132-x86_64-linux");
  // A GPU machine with only cpu variants built tests those.
  const Names cpu_built = {"torch215-cxx11-cpu-x86_64-linux"};
  EXPECT_EQ(choose_test_variant(cpu_built, cpu_machine(), gpu, std::nullopt).value(),
            "torch215-cxx11-cpu-x86_64-linux");
  const Names noarch = {"torch-cpu", "torch-cuda"};
  EXPECT_EQ(choose_test_variant(noarch, cpu_machine(), cpu_only, std::nullopt).value(),
            "torch-cpu");
  EXPECT_EQ(choose_test_variant(noarch, cpu_machine(), gpu, std::nullopt).value(), "torch-cuda");
}

TEST(TestRunner, RequestedVariantMustBeBuilt) {
  const Names built = {"torch-cpu"};
  const std::vector<variants::SystemBackend> cpu_only = {k_cpu};
  EXPECT_EQ(choose_test_variant(built, cpu_machine(), cpu_only, "torch-cpu").value(),
            "torch-cpu");
  const auto missing = choose_test_variant(built, cpu_machine(), cpu_only, "torch-cuda");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message,
            "variant \"torch-cuda\" is not built; did you mean \"torch-cpu\"? (built variants: "
            "torch-cpu)");
  const auto none = choose_test_variant({}, cpu_machine(), cpu_only, std::nullopt);
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message.find("kernel-builder build"), std::string::npos);
}

// Issue 22 §9: `--variant cpu` names the one cpu variant built; one that matches several is
// refused with them.
TEST(TestRunner, ARequestedShortFormNamesOneBuiltVariant) {
  const Names built = {"torch214-cxx11-cpu-x86_64-linux", "torch215-cxx11-cpu-x86_64-linux",
                       "torch215-cxx11-cu132-x86_64-linux"};
  const std::vector<variants::SystemBackend> cpu_only = {k_cpu};
  EXPECT_EQ(choose_test_variant(built, cpu_machine(), cpu_only, "cuda").value(),
            "torch215-cxx11-cu132-x86_64-linux");
  EXPECT_EQ(choose_test_variant(built, cpu_machine(), cpu_only, "torch214-cpu").value(),
            "torch214-cxx11-cpu-x86_64-linux");
  const auto several = choose_test_variant(built, cpu_machine(), cpu_only, "cpu");
  ASSERT_FALSE(several.has_value());
  EXPECT_EQ(several.error().message,
            "\"cpu\" matches 2 built variants (torch214-cxx11-cpu-x86_64-linux, "
            "torch215-cxx11-cpu-x86_64-linux); name one of them");
}

TEST(TestRunner, NoRunnableVariantExplainsWhy) {
  const Names built = {"torch215-cxx11-cu132-x86_64-linux"};
  const std::vector<variants::SystemBackend> cpu_only = {k_cpu};
  const auto chosen = choose_test_variant(built, cpu_machine(), cpu_only, std::nullopt);
  ASSERT_FALSE(chosen.has_value());
  EXPECT_NE(chosen.error().message.find("torch215-cxx11-cu132-x86_64-linux"), std::string::npos);
}

TEST(TestRunner, InvocationPutsTheVariantOnThePath) {
  TestSetup setup{"/k", "/k/build/torch-cpu", "/tmp/shim", "/venv/bin/python", "me/relu",
                  false, {"-x"}};
  const auto invocation = test_invocation(setup);
  const auto& command = invocation.command;
  ASSERT_GE(command.argv.size(), 6U);
  EXPECT_EQ((Names(command.argv.begin(), command.argv.begin() + 6)),
            (Names{"/venv/bin/python", "-m", "pytest", "tests", "-m", "kernels_ci"}));
  EXPECT_EQ(command.argv.back(), "-x");
  EXPECT_EQ(command.cwd, "/k");
  EXPECT_TRUE(has_arg(command, "/tmp/shim/pytest.ini"));
  EXPECT_TRUE(has_arg(command, "--rootdir"));
  ASSERT_TRUE(invocation.pytest_ini.has_value());
  EXPECT_NE(invocation.pytest_ini->find("kernels_ci:"), std::string::npos);
  EXPECT_TRUE(env_value(command, "PYTHONPATH").starts_with("/tmp/shim"));
  EXPECT_TRUE(env_value(command, "LOCAL_KERNELS").starts_with("me/relu=/k/build/torch-cpu"));
  EXPECT_EQ(env_value(command, "PYTHONDONTWRITEBYTECODE"), "1");

  setup.kernel_has_pytest_config = true;
  setup.repo_id.reset();
  const auto own = test_invocation(setup);
  EXPECT_FALSE(own.pytest_ini.has_value());
  EXPECT_FALSE(has_arg(own.command, "-c"));
  EXPECT_EQ(env_value(own.command, "LOCAL_KERNELS"), "<unset>");
}

TEST(TestRunner, FindsTheKernelsOwnPytestConfig) {
  write("a/pyproject.toml", "[project]\nname = \"a\"\n");
  EXPECT_FALSE(has_pytest_config("a"));
  write("b/pyproject.toml", "[tool.pytest.ini_options]\nmarkers = [\"kernels_ci\"]\n");
  EXPECT_TRUE(has_pytest_config("b"));
  write("c/pytest.ini", "[pytest]\n");
  EXPECT_TRUE(has_pytest_config("c"));
}

TEST(TestRunner, NoTestsCollectedPasses) {
  EXPECT_EQ(test_exit_status(0), 0);
  EXPECT_EQ(test_exit_status(5), 0);
  EXPECT_EQ(test_exit_status(1), 1);
  EXPECT_EQ(test_exit_status(2), 2);
}

}  // namespace
}  // namespace kernelhub::builder
