// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/builder/job_limit.hpp>

namespace kernelhub::builder {
namespace {

TEST(JobLimit, CoresBoundWhenMemoryIsPlenty) {
  EXPECT_EQ(job_limit(8, 64 * k_gib, CompilerKind::cxx), 8U);
  EXPECT_EQ(job_limit(8, 64 * k_gib, CompilerKind::device), 8U);
  EXPECT_EQ(job_limit(8, std::nullopt, CompilerKind::device), 8U);
}

TEST(JobLimit, MemoryBoundPerCompilerKind) {
  EXPECT_EQ(job_limit(16, 5 * k_gib + 100, CompilerKind::cxx), 5U);
  EXPECT_EQ(job_limit(16, 5 * k_gib + 100, CompilerKind::device), 2U);
}

TEST(JobLimit, NeverBelowOne) {
  EXPECT_EQ(job_limit(0, std::nullopt, CompilerKind::cxx), 1U);
  EXPECT_EQ(job_limit(4, 100, CompilerKind::device), 1U);
  EXPECT_EQ(job_limit(4, 0, CompilerKind::cxx), 1U);
}

TEST(JobLimit, NvccThreadsShareTheDeviceBudgetAmongCudaSources) {
  // One .cu file, two archs, two cores: both archs at once.
  EXPECT_EQ(nvcc_threads(2, 1, 2), 2U);
  // Never more threads than archs.
  EXPECT_EQ(nvcc_threads(16, 1, 3), 3U);
  // Ten archs on a budget of 8 shared by two sources: 4 each.
  EXPECT_EQ(nvcc_threads(8, 2, 10), 4U);
  // More sources than the budget: ninja already keeps every core busy.
  EXPECT_EQ(nvcc_threads(2, 40, 10), 1U);
  EXPECT_EQ(nvcc_threads(1, 0, 0), 1U);
}

TEST(JobLimit, ParsesMemAvailable) {
  const char* meminfo =
      "MemTotal:       131072000 kB\nMemFree:         1000 kB\nMemAvailable:   2097152 kB\n"
      "Buffers:          100 kB\n";
  EXPECT_EQ(parse_mem_available(meminfo), 2097152ULL * 1024);
  EXPECT_EQ(parse_mem_available("MemTotal: 5 kB\n"), std::nullopt);
  EXPECT_EQ(parse_mem_available("MemAvailable: lots\n"), std::nullopt);
  EXPECT_EQ(parse_mem_available("MemAvailable:   12 kB"), 12ULL * 1024);
  EXPECT_GE(available_cores(), 1U);
}

}  // namespace
}  // namespace kernelhub::builder
