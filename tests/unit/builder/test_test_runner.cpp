// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

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

TestSetup relu_setup() {
  TestSetup setup;
  setup.kernel_dir = "/k";
  setup.shim_dir = "/tmp/shim";
  setup.python_name = "relu";
  setup.python = "/venv/bin/python";
  setup.repo_id = "me/relu";
  setup.pytest_args = {"-x"};
  setup.candidates = {{"torch-cpu", "as --variant asked"}};
  return setup;
}

// The driver's plan: the JSON after `python -c <driver>`.
nlohmann::json plan_of(const Command& command) {
  EXPECT_EQ(command.argv.size(), 4U);
  return nlohmann::json::parse(command.argv.back());
}

TEST(TestRunner, InvocationPutsTheVariantOnThePath) {
  auto setup = relu_setup();
  const auto invocation = test_invocation(setup);
  const auto& command = invocation.command;
  ASSERT_EQ(command.argv.size(), 4U);
  EXPECT_EQ(command.argv.at(0), "/venv/bin/python");
  EXPECT_EQ(command.argv.at(1), "-c");
  EXPECT_NE(command.argv.at(2).find(
                "pytest.main(plan[\"pytest_args\"], plugins=[FreezeAfterCollection()])"),
            std::string::npos);
  const auto plan = plan_of(command);
  const auto args = plan.at("pytest_args").get<Names>();
  ASSERT_GE(args.size(), 3U);
  EXPECT_EQ((Names(args.begin(), args.begin() + 3)), (Names{"tests", "-m", "kernels_ci"}));
  EXPECT_EQ(args.back(), "-x");
  EXPECT_NE(std::find(args.begin(), args.end(), "/tmp/shim/pytest.ini"), args.end());
  EXPECT_NE(std::find(args.begin(), args.end(), "--rootdir"), args.end());
  EXPECT_EQ(plan.at("link"), "/tmp/shim/relu");
  EXPECT_EQ(plan.at("repo_id"), "me/relu");
  EXPECT_EQ(plan.at("decision"), test_decision_path("/tmp/shim").string());
  ASSERT_EQ(plan.at("candidates").size(), 1U);
  EXPECT_EQ(plan.at("candidates")[0].at("dir"), "/k/build/torch-cpu");
  EXPECT_EQ(command.cwd, "/k");
  ASSERT_TRUE(invocation.pytest_ini.has_value());
  EXPECT_NE(invocation.pytest_ini->find("kernels_ci:"), std::string::npos);
  EXPECT_TRUE(env_value(command, "PYTHONPATH").starts_with("/tmp/shim"));
  EXPECT_EQ(env_value(command, "PYTHONDONTWRITEBYTECODE"), "1");

  setup.kernel_has_pytest_config = true;
  setup.repo_id.reset();
  const auto own = test_invocation(setup);
  EXPECT_FALSE(own.pytest_ini.has_value());
  const auto own_args = plan_of(own.command).at("pytest_args").get<Names>();
  EXPECT_EQ(std::find(own_args.begin(), own_args.end(), "-c"), own_args.end());
  EXPECT_TRUE(plan_of(own.command).at("repo_id").is_null());
}

TEST(TestRunner, TwoCandidatesLeaveTheDeviceQuestionToTheDriver) {
  auto setup = relu_setup();
  setup.candidates = {{"torch215-cxx11-cu132-x86_64-linux", "the loader's pick"},
                      {"torch215-cxx11-cpu-x86_64-linux", "no cuda device"}};
  setup.device_backend = types::Backend::cuda;
  const auto plan = plan_of(test_invocation(setup).command);
  EXPECT_EQ(plan.at("device_backend"), "cuda");
  ASSERT_EQ(plan.at("candidates").size(), 2U);
  EXPECT_EQ(plan.at("candidates")[0].at("variant"), "torch215-cxx11-cu132-x86_64-linux");
  EXPECT_EQ(plan.at("candidates")[1].at("reason"), "no cuda device");
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
