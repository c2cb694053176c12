// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/loader/device_arch.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>

namespace {

using namespace kernelhub::loader;

TEST(DeviceArch, CudaArchForms) {
  EXPECT_EQ(cuda_arch_supports("8.0", {8, 6}), true);   // same generation, newer minor
  EXPECT_EQ(cuda_arch_supports("8.6", {8, 0}), false);  // older minor
  EXPECT_EQ(cuda_arch_supports("8.0", {9, 0}), false);  // other generation
  EXPECT_EQ(cuda_arch_supports("8.0+PTX", {9, 0}), true);
  EXPECT_EQ(cuda_arch_supports("9.0+PTX", {8, 9}), false);
  EXPECT_EQ(cuda_arch_supports("9.0a", {9, 0}), true);
  EXPECT_EQ(cuda_arch_supports("9.0a", {9, 1}), false);
  EXPECT_EQ(cuda_arch_supports("10.0f", {10, 3}), true);
  EXPECT_EQ(cuda_arch_supports("10.0f", {12, 0}), false);
  EXPECT_EQ(cuda_arch_supports("sm_90", {9, 0}), std::nullopt);
  EXPECT_EQ(cuda_arch_supports("9.x", {9, 0}), std::nullopt);
}

kernelhub::metadata::Metadata meta(const std::string& backend, const std::string& archs) {
  const std::string text =
      "{\"name\": \"relu\", \"id\": \"_relu_x\", \"version\": 1, \"license\": \"MIT\", "
      "\"python-depends\": [], \"backend\": {\"type\": \"" + backend + "\", \"archs\": [" +
      archs + "]}}";
  return kernelhub::metadata::parse_metadata(text).value();
}

TEST(DeviceArch, MismatchNamesCapabilityAndArchs) {
  DeviceArch device;
  device.cuda = CudaCapability{7, 5};
  const auto reason = arch_mismatch(meta("cuda", "\"8.0\", \"9.0+PTX\""), device);
  ASSERT_TRUE(reason);
  EXPECT_EQ(*reason, "CUDA capability 7.5 of this GPU is not in the build's archs: 8.0, 9.0+PTX");
  device.cuda = CudaCapability{8, 9};
  EXPECT_FALSE(arch_mismatch(meta("cuda", "\"8.0\", \"9.0+PTX\""), device));
}

TEST(DeviceArch, NoDeviceOrUnknownArchsNeverReject) {
  EXPECT_FALSE(arch_mismatch(meta("cuda", "\"8.0\""), DeviceArch{}));
  DeviceArch device;
  device.cuda = CudaCapability{7, 5};
  EXPECT_FALSE(arch_mismatch(meta("cuda", "\"sm_100x\""), device));
  EXPECT_FALSE(arch_mismatch(meta("cpu", "\"8.0\""), device));
}

TEST(DeviceArch, RocmNeedsTheExactTarget) {
  DeviceArch device;
  device.rocm = "gfx90a";
  EXPECT_FALSE(arch_mismatch(meta("rocm", "\"gfx90a\", \"gfx942\""), device));
  const auto reason = arch_mismatch(meta("rocm", "\"gfx942\""), device);
  ASSERT_TRUE(reason);
  EXPECT_EQ(*reason, "ROCm arch gfx90a of this GPU is not in the build's archs: gfx942");
}

}  // namespace
