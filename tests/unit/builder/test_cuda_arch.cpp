// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <kernelhub/builder/cuda_arch.hpp>

namespace kernelhub::builder {
namespace {

std::vector<CudaArch> archs(const std::vector<std::string>& names) {
  auto parsed = parse_cuda_archs(names);
  EXPECT_TRUE(parsed.has_value()) << parsed.error().message;
  return parsed.value_or(std::vector<CudaArch>{});
}

std::vector<std::string> intersect(const std::vector<std::string>& kernel,
                                   const std::vector<std::string>& targets) {
  return to_strings(loose_intersection(archs(kernel), archs(targets)));
}

TEST(CudaArch, ParsesSuffixesAndPtx) {
  const auto arch = parse_cuda_arch("9.0a+PTX").value();
  EXPECT_EQ(arch.major, 9U);
  EXPECT_EQ(arch.minor, 0U);
  EXPECT_EQ(arch.suffix, "a");
  EXPECT_TRUE(arch.ptx);
  EXPECT_EQ(arch.base(), "9.0a");
  EXPECT_EQ(arch.to_string(), "9.0a+PTX");
  EXPECT_EQ(arch.code(), "90a");
  EXPECT_EQ(parse_cuda_arch("12.1").value().code(), "121");
  EXPECT_EQ(parse_cuda_arch("10.0f").value().suffix, "f");
}

TEST(CudaArch, RejectsWhatIsNotACapability) {
  for (const auto* text : {"", "9", "9.", ".0", "sm_90", "9.0b", "9.10", "9.0+ptx", "x.0"}) {
    const auto parsed = parse_cuda_arch(text);
    ASSERT_FALSE(parsed.has_value()) << text;
    EXPECT_NE(parsed.error().message.find(std::string("invalid cuda capability \"") + text + "\""),
              std::string::npos);
  }
}

TEST(CudaArch, DefaultsFollowTheToolkitVersion) {
  const auto cuda13 = to_strings(default_cuda_archs(types::Version({13, 2})).value());
  EXPECT_EQ(cuda13, (std::vector<std::string>{"7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0",
                                               "11.0", "12.0", "12.1+PTX"}));
  const auto cuda128 = to_strings(default_cuda_archs(types::Version({12, 8})).value());
  EXPECT_EQ(cuda128.front(), "7.0");
  EXPECT_EQ(cuda128.back(), "12.0+PTX");
  const auto cuda126 = to_strings(default_cuda_archs(types::Version({12, 6})).value());
  EXPECT_EQ(cuda126, (std::vector<std::string>{"7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.9",
                                                "9.0+PTX"}));
}

// The reference's relu-archs-subset example: [5.0, 7.5, 8.0, 9.0] against CUDA 12.6's
// defaults must compile exactly sm_75, sm_80 and sm_90.
TEST(CudaArch, LooseIntersectionKeepsOnlyArchsOfATargetMajor) {
  EXPECT_EQ(intersect({"5.0", "7.5", "8.0", "9.0"},
                      {"7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0"}),
            (std::vector<std::string>{"7.5", "8.0", "9.0"}));
}

TEST(CudaArch, LooseIntersectionExamplesOfTheReference) {
  EXPECT_EQ(intersect({"7.5", "8.0", "8.6", "9.0", "9.0a"}, {"8.0", "8.9", "9.0"}),
            (std::vector<std::string>{"8.0", "8.6", "9.0a"}));
  // +PTX matches later majors too, and keeps its suffix.
  EXPECT_EQ(intersect({"8.0+PTX"}, {"9.0"}), (std::vector<std::string>{"8.0+PTX"}));
  // Without +PTX, SASS for 8.0 does not run on 9.0.
  EXPECT_TRUE(intersect({"8.0"}, {"9.0"}).empty());
  EXPECT_TRUE(intersect({"99999.0"}, {"7.5", "8.0"}).empty());
}

TEST(CudaArch, LooseIntersectionHonoursPtxOnTheArchThatAsksForIt) {
  EXPECT_EQ(intersect({"8.0", "9.0+PTX"},
                      {"7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "11.0", "12.0", "12.1"}),
            (std::vector<std::string>{"8.0", "9.0+PTX"}));
  EXPECT_EQ(intersect({"10.0a", "10.0f"}, {"10.0"}),
            (std::vector<std::string>{"10.0a", "10.0f"}));
  EXPECT_EQ(intersect({"9.0a+PTX"}, {"9.0"}), (std::vector<std::string>{"9.0a+PTX"}));
  EXPECT_TRUE(intersect({"9.0a"}, {"9.1"}).empty());
}

TEST(CudaArch, NvccSupportDropsOlderArchsAndSaysWhich) {
  std::vector<CudaArch> dropped;
  const auto kept =
      supported_by_nvcc(archs({"7.0", "7.5", "9.0a", "12.1+PTX"}), archs({"7.5", "9.0", "12.1"}),
                        dropped);
  EXPECT_EQ(to_strings(kept), (std::vector<std::string>{"7.5", "9.0a", "12.1+PTX"}));
  EXPECT_EQ(to_strings(dropped), (std::vector<std::string>{"7.0"}));
}

TEST(CudaArch, GencodeFlagsOnePerArchAndPtxForPtxArchs) {
  EXPECT_EQ(gencode_flags(archs({"8.0", "9.0a", "12.1+PTX"})),
            (std::vector<std::string>{"-gencode=arch=compute_80,code=sm_80",
                                      "-gencode=arch=compute_90a,code=sm_90a",
                                      "-gencode=arch=compute_121,code=sm_121",
                                      "-gencode=arch=compute_121,code=compute_121"}));
}

TEST(CudaArch, MetadataArchsSortNumerically) {
  EXPECT_EQ(sorted_arch_names({"12.0", "10.0", "9.0+PTX", "7.5", "8.0", "9.0", "8.0", "9.0a"}),
            (std::vector<std::string>{"7.5", "8.0", "9.0", "9.0+PTX", "9.0a", "10.0", "12.0"}));
  EXPECT_EQ(sorted_arch_names({"gfx90a", "8.0"}), (std::vector<std::string>{"8.0", "gfx90a"}));
}

}  // namespace
}  // namespace kernelhub::builder
