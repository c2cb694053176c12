// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/builder/command_runner.hpp>
#include <kernelhub/builder/incremental.hpp>

namespace kernelhub::builder {
namespace {

TEST(NinjaProgress, NamesTheBackendTheCountAndTheSource) {
  EXPECT_EQ(ninja_progress("[37/90] Building CUDA object "
                           "CMakeFiles/_gelu_cuda_1a2b.dir/csrc/gelu.cu.o",
                           "cuda"),
            "[cuda 37/90] csrc/gelu.cu");
  EXPECT_EQ(ninja_progress("[1/3] Building CXX object CMakeFiles/_relu_cpu_9.dir/relu_cpu/"
                           "relu_cpu.cpp.o",
                           "cpu"),
            "[cpu 1/3] relu_cpu/relu_cpu.cpp");
  EXPECT_EQ(ninja_progress("[3/3] Linking CXX shared module _relu_cpu_9.abi3.so", "cpu"),
            "[cpu 3/3] Linking CXX shared module _relu_cpu_9.abi3.so");
  // A source outside CMake's project is named by its absolute path, shown from the kernel.
  EXPECT_EQ(ninja_progress("[1/4] Building CXX object CMakeFiles/_relu_cpu_9.dir/home/me/relu/"
                           "relu_cpu/relu_cpu.cpp.o",
                           "cpu", "/home/me/relu"),
            "[cpu 1/4] relu_cpu/relu_cpu.cpp");
  EXPECT_EQ(ninja_progress("[1/4] Building CXX object CMakeFiles/x.dir/home/me/relu2/a.cpp.o",
                           "cpu", "/home/me/relu"),
            "[cpu 1/4] home/me/relu2/a.cpp");  // another folder that only starts alike
  // Without a label, the count alone.
  EXPECT_EQ(ninja_progress("[2/5] Building CXX object CMakeFiles/x.dir/a.cpp.o", ""),
            "[2/5] a.cpp");
}

TEST(NinjaProgress, OtherLinesAreNotSteps) {
  EXPECT_EQ(ninja_progress("ninja: no work to do.", "cpu"), "");
  EXPECT_EQ(ninja_progress("ninja: Entering directory `b'", "cpu"), "");
  EXPECT_EQ(ninja_progress("[ 50%] Built target x", "cpu"), "");  // make's, not ninja's
  EXPECT_EQ(ninja_progress("[x/y] z", "cpu"), "");
  EXPECT_EQ(ninja_progress("/a/b.cpp:3:1: error: [5/6] no", "cpu"), "");
}

TEST(NinjaProgress, ALongLineStaysOneTerminalLine) {
  const auto line = "[1/2] Building CXX object CMakeFiles/x.dir/" + std::string(200, 'a') + ".cpp.o";
  EXPECT_EQ(ninja_progress(line, "cpu").size(), 100U);
}

TEST(WatchForWork, AConfigureMeansWorkNow) {
  std::vector<Command> commands{Command{{"cmake", "-S", "p", "-B", "b"}, {}},
                                Command{{"ninja", "-C", "b"}, {}}};
  int calls = 0;
  watch_for_work(commands, types::Backend::cuda, "/k", [&calls] { ++calls; });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(commands.back().progress_label, "cuda");
  EXPECT_EQ(commands.back().progress_root, "/k");
  ASSERT_TRUE(commands.back().on_work);
}

TEST(WatchForWork, NinjaAloneMeansWorkOnlyWhenItTakesAStep) {
  std::vector<Command> commands{Command{{"ninja", "-C", "b"}, {}}};
  int calls = 0;
  watch_for_work(commands, types::Backend::cpu, "/k", [&calls] { ++calls; });
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(commands.back().progress_label, "cpu");
  SubprocessCommandRunner runner(ToolOutput::on_failure);
  // A no-op ninja: no step, no call.
  commands.back().argv = {"sh", "-c", "echo \"ninja: no work to do.\""};
  ASSERT_EQ(runner.run(commands.back()).value_or(-1), 0);
  EXPECT_EQ(calls, 0);
  // Two steps: one call, at the first.
  commands.back().argv = {"sh", "-c",
                          "echo '[1/2] Building CXX object CMakeFiles/x.dir/a.cpp.o'; "
                          "echo '[2/2] Linking CXX shared module x.so'"};
  ASSERT_EQ(runner.run(commands.back()).value_or(-1), 0);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace kernelhub::builder
