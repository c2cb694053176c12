// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <kernelhub/variants/acceptance.hpp>

namespace {

using namespace kernelhub::variants;
using kernelhub::types::Backend;

ReleaseVersion v(const char* text) { return ReleaseVersion::parse(text).value(); }

std::vector<Variant> parse_all(const std::vector<std::string>& names) {
  std::vector<Variant> variants;
  for (const auto& name : names) {
    variants.push_back(parse_variant(name).value());
  }
  return variants;
}

SystemInfo cuda_linux(const char* cuda, const char* torch) {
  SystemInfo system;
  system.torch_version = v(torch);
  system.cxx11_abi = true;
  system.backend = SystemBackend{Backend::cuda, v(cuda)};
  return system;
}

// loader.md §2.4's worked example.
TEST(Acceptance, WorkedExampleFromTheLoaderDocs) {
  const auto variants = parse_all({
      "torch210-cxx11-cu126-x86_64-linux", "torch210-cxx11-cu128-x86_64-linux",
      "torch210-cxx11-cu130-x86_64-linux", "torch210-cxx11-rocm70-x86_64-linux",
      "torch210-cxx11-cpu-x86_64-linux",   "torch210-cu128-aarch64-darwin",
      "torch-cuda",                        "torch-cpu",
  });
  const auto resolution = resolve_variants(cuda_linux("12.8", "2.10"), variants);
  ASSERT_NE(resolution.best(), nullptr);
  EXPECT_EQ(to_string(*resolution.best()), "torch210-cxx11-cu128-x86_64-linux");
  EXPECT_EQ(render_trace(resolution.trace),
            "torch210-cxx11-cu128-x86_64-linux compatible, preferred ✅\n"
            "torch210-cxx11-cu126-x86_64-linux compatible ✅\n"
            "torch-cuda compatible ✅\n"
            // Rejected ones sort too: the tagless darwin name before the -cxx11 ones.
            "torch210-cu128-aarch64-darwin: CPU (aarch64) does not match system CPU (x86_64)\n"
            "torch210-cxx11-cu130-x86_64-linux: CUDA version (13.0) is not compatible with "
            "system CUDA version (12.8)\n"
            "torch210-cxx11-rocm70-x86_64-linux: backend (rocm70) does not match selected "
            "backend (cu128)\n"
            "torch210-cxx11-cpu-x86_64-linux: backend (cpu) does not match selected backend "
            "(cu128)\n"
            "torch-cpu: backend (cpu) does not match system backend (cuda) and is not universal");

  // With CUDA 12.5 only the noarch variant is left.
  const auto older = resolve_variants(cuda_linux("12.5", "2.10"), variants);
  ASSERT_NE(older.best(), nullptr);
  EXPECT_EQ(to_string(*older.best()), "torch-cuda");
  EXPECT_FALSE(older.trace[1].accepted());
}

// Issue 22 §4: a CUDA build of torch without a GPU selects cuda; a cpu variant is preferred
// there, and the cuda variants are still chosen when there is no cpu one.
TEST(Acceptance, WithoutADeviceACpuVariantIsPreferred) {
  auto system = cuda_linux("13.2", "2.15");
  system.backend_device = false;
  const auto cpu_only = parse_all({"torch215-cxx11-cpu-x86_64-linux"});
  const auto resolution = resolve_variants(system, cpu_only);
  ASSERT_NE(resolution.best(), nullptr);
  EXPECT_EQ(to_string(*resolution.best()), "torch215-cxx11-cpu-x86_64-linux");

  const auto both = parse_all({"torch215-cxx11-cu132-x86_64-linux",
                               "torch215-cxx11-cpu-x86_64-linux"});
  EXPECT_EQ(to_string(*resolve_variants(system, both).best()),
            "torch215-cxx11-cpu-x86_64-linux");
  const auto noarch = parse_all({"torch-cuda", "torch-cpu"});
  EXPECT_EQ(to_string(*resolve_variants(system, noarch).best()), "torch-cpu");

  // No cpu variant: the selected backend's, with its trace.
  const auto cuda_only = parse_all({"torch215-cxx11-cu132-x86_64-linux"});
  const auto fallback = resolve_variants(system, cuda_only);
  ASSERT_NE(fallback.best(), nullptr);
  EXPECT_EQ(to_string(*fallback.best()), "torch215-cxx11-cu132-x86_64-linux");

  // With the device (the default), the reference's choice.
  system.backend_device = true;
  EXPECT_EQ(to_string(*resolve_variants(system, both).best()),
            "torch215-cxx11-cu132-x86_64-linux");
  EXPECT_EQ(resolve_variants(system, cpu_only).best(), nullptr);
}

TEST(Acceptance, ARequestedBackendIsTakenAsAsked) {
  auto system = cuda_linux("13.2", "2.15");
  system.backend_device = false;
  ASSERT_TRUE(apply_backend(system, "cuda"));
  EXPECT_TRUE(system.backend_device);
  EXPECT_EQ(resolve_variants(system, parse_all({"torch215-cxx11-cpu-x86_64-linux"})).best(),
            nullptr);
  system.backend_device = false;
  ASSERT_TRUE(apply_backend(system, std::nullopt));
  EXPECT_FALSE(system.backend_device);
  EXPECT_FALSE(apply_backend(system, "rocm"));
}

TEST(Acceptance, FrameworkReasonsPrintPythonValues) {
  SystemInfo no_torch;
  no_torch.backend = SystemBackend{Backend::cpu, {}};
  const auto variants = parse_all({"torch29-cxx98-cpu-x86_64-linux",
                                   "torch-stable-abi29-cpu-x86_64-linux",
                                   "tvm-ffi01-cpu-x86_64-linux", "torch29-cpu-x86_64-darwin"});
  const auto trace = check_variants(no_torch, variants);
  ASSERT_EQ(trace.size(), 4u);
  EXPECT_EQ(*trace[0].rejection,
            "Torch version (2.9) does not match environment Torch version (None)");
  EXPECT_EQ(*trace[1].rejection,
            "Torch stable ABI version (2.9) is too new for environment Torch version (None)");
  EXPECT_EQ(*trace[2].rejection,
            "tvm-ffi version (0.1) does not match environment tvm-ffi version (None)");
  EXPECT_EQ(*trace[3].rejection, "OS (darwin) does not match system OS (linux)");

  SystemInfo torch29 = no_torch;
  torch29.torch_version = v("2.9");
  torch29.cxx11_abi = true;
  EXPECT_EQ(*check_variants(torch29, variants)[0].rejection,
            "Torch CXX11 ABI (False) does not match environment Torch CXX11 ABI (True)");
  EXPECT_TRUE(check_variants(torch29, variants)[1].accepted());
}

TEST(Acceptance, StableAbiAcceptsOlderAbisAndPrefersTheNewest) {
  SystemInfo system = cuda_linux("12.9", "2.12");
  const auto variants = parse_all({"torch-stable-abi29-cu126-x86_64-linux",
                                   "torch-stable-abi211-cu128-x86_64-linux",
                                   "torch-stable-abi213-cu128-x86_64-linux",
                                   "torch212-cu128-x86_64-linux"});
  const auto trace = resolve_variants(system, variants).trace;
  std::vector<std::string> order;
  for (const auto& decision : trace) {
    order.push_back(to_string(decision.variant) + (decision.accepted() ? "" : " x"));
  }
  EXPECT_EQ(order, (std::vector<std::string>{
                       "torch-stable-abi211-cu128-x86_64-linux",
                       "torch-stable-abi29-cu126-x86_64-linux",
                       "torch212-cu128-x86_64-linux",
                       "torch-stable-abi213-cu128-x86_64-linux x",
                   }));
}

TEST(Acceptance, MetalNeedsMacos26) {
  SystemInfo mac;
  mac.cpu = "aarch64";
  mac.os = "darwin";
  mac.torch_version = v("2.12");
  mac.backend = SystemBackend{Backend::metal, {}};
  const auto variants = parse_all({"torch212-metal-aarch64-darwin", "torch-metal"});
  EXPECT_EQ(*check_variants(mac, variants)[0].rejection,
            "Metal kernels require macOS 26.0 or later, system macOS version is None");
  mac.macos_version = v("15.7.1");
  EXPECT_EQ(*check_variants(mac, variants)[0].rejection,
            "Metal kernels require macOS 26.0 or later, system macOS version is 15.7.1");
  mac.macos_version = v("26");
  EXPECT_TRUE(check_variants(mac, variants)[0].accepted());
  EXPECT_TRUE(check_variants(mac, variants)[1].accepted());
}

TEST(Acceptance, NoarchMatchesBackendNameOrUniversal) {
  SystemInfo npu;
  npu.backend = SystemBackend{Backend::cann, v("8.1")};
  const auto variants = parse_all({"torch-universal", "torch-cann", "torch-npu"});
  const auto resolution = resolve_variants(npu, variants);
  ASSERT_EQ(resolution.trace.size(), 3u);
  EXPECT_EQ(to_string(resolution.trace[0].variant), "torch-npu");
  EXPECT_EQ(to_string(resolution.trace[1].variant), "torch-universal");
  EXPECT_EQ(*resolution.trace[2].rejection,
            "backend (cann) does not match system backend (npu) and is not universal");
}

TEST(Acceptance, FreeThreadedDropsArchVariants) {
  SystemInfo system = cuda_linux("12.8", "2.12");
  system.free_threaded = true;
  const auto resolution =
      resolve_variants(system, parse_all({"torch212-cxx11-cu128-x86_64-linux", "torch-cuda"}));
  ASSERT_EQ(resolution.trace.size(), 1u);
  EXPECT_EQ(to_string(resolution.trace[0].variant), "torch-cuda");
  EXPECT_EQ(resolution.warning, std::string(k_free_threaded_warning));
}

TEST(Acceptance, TiesKeepInputOrderAndDuplicatesAreAllPreferred) {
  SystemInfo system;
  system.torch_version = v("2.12");
  system.tvm_ffi_version = v("0.1");
  system.backend = SystemBackend{Backend::cpu, {}};
  const auto variants =
      parse_all({"torch-cpu", "tvm-ffi01-cpu-x86_64-linux", "torch-cpu"});
  const auto resolution = resolve_variants(system, variants);
  EXPECT_EQ(render_trace(resolution.trace),
            "torch-cpu compatible, preferred ✅\n"
            "tvm-ffi01-cpu-x86_64-linux compatible ✅\n"
            "torch-cpu compatible, preferred ✅");
}

TEST(Acceptance, RenderingKeepsTheGivenOrder) {
  SystemInfo system = cuda_linux("12.8", "2.12");
  const auto decisions =
      check_variants(system, parse_all({"torch-cpu", "torch212-cxx11-cu126-x86_64-linux"}));
  EXPECT_EQ(render_trace(decisions),
            "torch-cpu: backend (cpu) does not match system backend (cuda) and is not universal\n"
            "torch212-cxx11-cu126-x86_64-linux compatible, preferred ✅");
  EXPECT_EQ(render_trace({}), "");
}

TEST(SelectBackend, AcceptsCpuOrTheDetectedBackend) {
  const SystemBackend cuda{Backend::cuda, v("12.8")};
  EXPECT_EQ(select_backend(cuda, std::nullopt).value(), cuda);
  EXPECT_EQ(select_backend(cuda, "cuda").value(), cuda);
  EXPECT_EQ(select_backend(cuda, "cpu")->kind, Backend::cpu);
  EXPECT_EQ(select_backend(cuda, "rocm").error().message,
            "Invalid backend 'rocm', system supported backends: cpu, cuda");
  EXPECT_EQ(select_backend(SystemBackend{Backend::cann, v("8.1")}, "npu").error().message,
            "Invalid backend 'npu', system supported backends: cann, cpu");
  EXPECT_EQ(select_backend(SystemBackend{}, "metal").error().message,
            "Invalid backend 'metal', system supported backends: cpu");
}

}  // namespace

namespace {

TEST(Acceptance, NamesThatDoNotParseAreSkipped) {
  using namespace kernelhub::variants;
  SystemInfo system;
  system.torch_version = ReleaseVersion::parse("2.12").value();
  const std::vector<std::string> names = {"torch-cpu", "torch2-cpu-x86_64-linux", "junk",
                                          "torch212-cpu-x86_64-linux"};
  const auto resolution = resolve_variant_names(system, names);
  EXPECT_EQ(resolution.skipped, (std::vector<std::string>{"torch2-cpu-x86_64-linux", "junk"}));
  EXPECT_EQ(render_trace(resolution.trace),
            "torch212-cpu-x86_64-linux compatible, preferred ✅\ntorch-cpu compatible ✅");
}

}  // namespace
