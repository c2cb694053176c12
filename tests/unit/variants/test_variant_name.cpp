// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <kernelhub/variants/variant_name.hpp>

namespace {

using namespace kernelhub::variants;
using kernelhub::types::Backend;

// Every variant name written in the reference's docs (loader.md §2.1, builder.md §4).
constexpr const char* k_documented_names[] = {
    "torch-stable-abi211-cu126-x86_64-linux", "torch-stable-abi211-cu128-x86_64-linux",
    "torch-stable-abi29-metal-aarch64-darwin", "torch210-cu128-x86_64-windows",
    "torch210-cxx11-cu128-x86_64-linux",      "torch211-cxx11-cpu-x86_64-linux",
    "torch212-cpu-aarch64-darwin",            "torch212-cxx11-cu126-x86_64-linux",
    "torch212-cxx11-cu130-aarch64-linux",     "torch212-cxx11-rocm72-x86_64-linux",
    "torch212-metal-aarch64-darwin",          "torch213-cpu-aarch64-darwin",
    "torch213-cxx11-xpu20260-x86_64-linux",   "torch26-cxx98-cu118-x86_64-linux",
    "torch27-cu124-x86_64-windows",           "tvm-ffi01-cu126-x86_64-linux",
    "tvm-ffi01-cu128-x86_64-linux",           "tvm-ffi01-xpu20253-x86_64-linux",
    "torch-cpu",   "torch-cuda", "torch-rocm", "torch-metal",     "torch-xpu",
    "torch-npu",   "torch-cann", "torch-neuron", "torch-tpu",     "torch-universal",
};

TEST(VariantName, DocumentedNamesRoundTrip) {
  for (const auto* name : k_documented_names) {
    const auto parsed = parse_variant(name);
    ASSERT_TRUE(parsed) << name << ": " << parsed.error().message;
    EXPECT_EQ(to_string(*parsed), name);
  }
}

TEST(VariantName, ParsesTorchArchWithAbiTag) {
  const auto v = parse_variant("torch212-cxx11-cu126-x86_64-linux").value();
  EXPECT_EQ(v.framework, Framework::torch);
  EXPECT_EQ(v.framework_version.to_string(), "2.12");
  EXPECT_EQ(v.abi_tag, AbiTag::cxx11);
  EXPECT_EQ(v.backend.kind, Backend::cuda);
  EXPECT_EQ(v.backend.version.to_string(), "12.6");
  EXPECT_EQ(v.cpu, "x86_64");
  EXPECT_EQ(v.os, "linux");
  EXPECT_EQ(parse_variant("torch26-cxx98-cu118-x86_64-linux")->abi_tag, AbiTag::cxx98);
  EXPECT_EQ(parse_variant("torch212-metal-aarch64-darwin")->abi_tag, AbiTag::none);
}

TEST(VariantName, SplitsShortVersionsAfterTheFirstDigit) {
  EXPECT_EQ(parse_variant("torch29-cpu-x86_64-linux")->framework_version.to_string(), "2.9");
  EXPECT_EQ(parse_variant("torch210-cpu-x86_64-linux")->framework_version.to_string(), "2.10");
  EXPECT_EQ(parse_variant("tvm-ffi01-cpu-x86_64-linux")->framework_version.to_string(), "0.1");
  EXPECT_EQ(parse_variant("tvm-ffi012-cpu-x86_64-linux")->framework_version.to_string(), "0.12");
  const auto stable = parse_variant("torch-stable-abi211-cu128-x86_64-linux").value();
  EXPECT_EQ(stable.framework, Framework::torch_stable_abi);
  EXPECT_EQ(stable.framework_version.to_string(), "2.11");
}

TEST(VariantName, BackendTokensTakeTheLastDigitAsMinor) {
  EXPECT_EQ(parse_backend_token("cu126")->version.to_string(), "12.6");
  EXPECT_EQ(parse_backend_token("cu1210")->version.to_string(), "121.0");
  EXPECT_EQ(parse_backend_token("rocm71")->version.to_string(), "7.1");
  EXPECT_EQ(parse_backend_token("xpu20253")->version.to_string(), "2025.3");
  EXPECT_EQ(parse_backend_token("cann81")->kind, Backend::cann);
  for (auto plain : {"cpu", "metal", "neuron", "tpu"}) {
    const auto token = parse_backend_token(plain);
    ASSERT_TRUE(token) << plain;
    EXPECT_EQ(to_string(*token), plain);
  }
  EXPECT_EQ(parse_backend_token("cuda").error().message, "invalid cuda version in \"cuda\"");
  EXPECT_EQ(parse_backend_token("cu1").error().message, "invalid cuda version in \"cu1\"");
  EXPECT_EQ(parse_backend_token("gpu").error().message, "unknown backend \"gpu\"");
}

TEST(VariantName, NoarchTakesTheRestVerbatim) {
  const auto v = parse_variant("torch-cuda-extra").value();
  EXPECT_FALSE(v.is_arch());
  EXPECT_EQ(v.noarch_backend, "cuda-extra");
  EXPECT_TRUE(parse_variant("torch-universal")->is_universal());
  // A bare "torch" is a noarch variant with an empty backend, printed as "torch-".
  EXPECT_EQ(to_string(parse_variant("torch").value()), "torch-");
}

TEST(VariantName, NormalisesLeadingZeros) {
  EXPECT_EQ(to_string(parse_variant("torch2010-cpu-x86_64-linux").value()),
            "torch210-cpu-x86_64-linux");
  EXPECT_EQ(to_string(parse_variant("tvm-ffi0012-cu0126-x86_64-linux").value()),
            "tvm-ffi012-cu126-x86_64-linux");
}

TEST(VariantName, KeepsHugeNumbersExact) {
  const std::string name = "torch2123456789012345678901234567890-cu99999999999999999999999-x-y";
  EXPECT_EQ(to_string(parse_variant(name).value()), name);
}

TEST(VariantName, RejectsWhatTheReferenceRejects) {
  const std::pair<const char*, const char*> cases[] = {
      {"cuda-torch", "unknown framework in variant name \"cuda-torch\""},
      {"", "unknown framework in variant name \"\""},
      {"tvm-ff01-cpu-x86_64-linux", "unknown framework in variant name \"tvm-ff01-cpu-x86_64-linux\""},
      {"torch2-cpu-x86_64-linux", "invalid torch version \"torch2\""},
      {"torchx12-cpu-x86_64-linux", "invalid torch version \"torchx12\""},
      {"torch-stable-abi2-cpu-x86_64-linux", "invalid torch stable ABI version \"torch-stable-abi2\""},
      {"torch-stable-abi-cpu", "invalid torch stable ABI version \"torch-stable-abi\""},
      {"tvm-ffi1-cpu-x86_64-linux", "invalid tvm-ffi version \"ffi1\""},
      {"torch212-cxx11-cu126-x86_64", "variant name \"torch212-cxx11-cu126-x86_64\" must end in "
                                      "<backend>-<cpu>-<os>, found \"cu126-x86_64\""},
      {"torch212-cxx11", "variant name \"torch212-cxx11\" must end in <backend>-<cpu>-<os>, found \"\""},
      {"torch212-cxx17-cpu-x86_64-linux", "variant name \"torch212-cxx17-cpu-x86_64-linux\" must "
                                          "end in <backend>-<cpu>-<os>, found "
                                          "\"cxx17-cpu-x86_64-linux\""},
      {"torch212-cuda-x86_64-linux",
       "invalid cuda version in \"cuda\" in variant name \"torch212-cuda-x86_64-linux\""},
      {"torch212--x86_64-linux", "unknown backend \"\" in variant name \"torch212--x86_64-linux\""},
  };
  for (const auto& [name, message] : cases) {
    const auto parsed = parse_variant(name);
    ASSERT_FALSE(parsed) << name;
    EXPECT_EQ(parsed.error().message, message);
  }
}

TEST(VariantName, AcceptsEmptyOrOddCpuAndOsParts) {
  // The reference takes cpu and os verbatim, so these load-time names still parse.
  const auto v = parse_variant("torch212-cpu--").value();
  EXPECT_EQ(v.cpu, "");
  EXPECT_EQ(v.os, "");
  EXPECT_EQ(to_string(v), "torch212-cpu--");
}

}  // namespace
