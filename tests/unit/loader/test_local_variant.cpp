// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/loader/local_variant.hpp>

#include "loader_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using namespace kernelhub::loader;
using namespace kernelhub::loader::testing;
using kernelhub::variants::ReleaseVersion;
using kernelhub::variants::SystemInfo;

SystemInfo cpu_system() {
  SystemInfo system;
  system.torch_version = ReleaseVersion::parse("2.10").value();
  system.cxx11_abi = true;
  return system;
}

SystemInfo cuda_system() {
  SystemInfo system = cpu_system();
  system.backend = {kernelhub::types::Backend::cuda, ReleaseVersion::parse("12.8").value()};
  return system;
}

TEST(LocalVariant, FindsVariantsInBuildFolder) {
  make_variant("repo/build/torch210-cxx11-cpu-x86_64-linux", "relu", "_relu_cpu_1");
  make_variant("repo/build/torch29-cxx11-cpu-x86_64-linux", "relu", "_relu_cpu_2");
  const auto match = find_local_variant("repo", cpu_system(), {});
  ASSERT_TRUE(match) << match.error().message;
  EXPECT_EQ(match->variant_path, fs::path("repo/build/torch210-cxx11-cpu-x86_64-linux"));
  EXPECT_EQ(match->resolution.trace.size(), 2u);
}

TEST(LocalVariant, PrefersTheRepoFolderOverBuild) {
  make_variant("repo/torch-cpu", "relu", "_relu_a");
  make_variant("repo/build/torch210-cxx11-cpu-x86_64-linux", "relu", "_relu_b");
  const auto match = find_local_variant("repo", cpu_system(), {});
  ASSERT_TRUE(match);
  EXPECT_EQ(match->variant_path, fs::path("repo/torch-cpu"));
}

TEST(LocalVariant, PathItselfIsTheVariant) {
  make_variant("v", "relu", "_relu_v");
  const auto match = find_local_variant("v", cpu_system(), {});
  ASSERT_TRUE(match);
  EXPECT_EQ(match->variant_path, fs::path("v"));
  EXPECT_TRUE(match->resolution.trace.empty());
}

TEST(LocalVariant, NothingFitsGivesTheTrace) {
  make_variant("repo/build/torch210-cxx11-cu128-x86_64-linux", "relu", "_relu_c");
  const auto match = find_local_variant("repo", cpu_system(), {});
  ASSERT_FALSE(match);
  EXPECT_NE(match.error().message.find("Cannot find a build variant for this system in repo:\n\n"
                                       "torch210-cxx11-cu128-x86_64-linux: "),
            std::string::npos)
      << match.error().message;
}

TEST(LocalVariant, ArchsExcludingTheGpuRejectWithReason) {
  make_variant("repo/build/torch210-cxx11-cu128-x86_64-linux", "relu", "_relu_c", "cuda",
               "\"9.0\"");
  make_variant("repo/build/torch-cuda", "relu", "_relu_n", "cuda");
  DeviceArch device;
  device.cuda = CudaCapability{8, 0};
  const auto match = find_local_variant("repo", cuda_system(), device);
  ASSERT_TRUE(match) << match.error().message;
  EXPECT_EQ(match->variant_path.filename(), "torch-cuda");
  const auto& trace = match->resolution.trace;
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_FALSE(trace[1].accepted());
  EXPECT_EQ(*trace[1].rejection,
            "CUDA capability 8.0 of this GPU is not in the build's archs: 9.0");

  device.cuda = CudaCapability{9, 0};
  const auto fits = find_local_variant("repo", cuda_system(), device);
  ASSERT_TRUE(fits);
  EXPECT_EQ(fits->variant_path.filename(), "torch210-cxx11-cu128-x86_64-linux");
}

TEST(LocalVariant, MissingPathIsAnError) {
  EXPECT_FALSE(find_local_variant("nowhere", cpu_system(), {}));
}

}  // namespace
