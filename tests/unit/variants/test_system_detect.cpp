// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <map>

#include <kernelhub/variants/program_runner.hpp>
#include <kernelhub/variants/system_detect.hpp>

namespace {

using namespace kernelhub::variants;
using kernelhub::types::Backend;

// Answers with canned output keyed by the program name; everything else "is not installed".
class FakeRunner : public ProgramRunner {
 public:
  std::map<std::string, std::string> outputs;
  mutable std::vector<std::vector<std::string>> calls;

  std::optional<std::string> run(const std::vector<std::string>& argv) const override {
    calls.push_back(argv);
    const auto found = outputs.find(argv.at(0));
    return found == outputs.end() ? std::nullopt : std::optional(found->second);
  }
};

constexpr const char* k_cuda_linux = R"({"executable": "/venv/bin/python", "machine": "x86_64",
  "system": "Linux", "mac_ver": "", "free_threaded": false, "tvm_ffi": "0.1.4",
  "torch": {"version": "2.10.1+cu128", "cxx11": true, "cuda": "12.8", "hip": null, "xpu": null,
            "tpu": false, "neuron": false, "mps": false, "privateuse1": "privateuseone", "cann": null}})";

// Issue 22 §4: whether the selected backend's device is present (absent from older probes:
// present).
TEST(SystemDetect, ReadsWhetherTheBackendHasADevice) {
  BuildHost host;
  ASSERT_TRUE(apply_python_probe(k_cuda_linux, host));
  EXPECT_TRUE(host.system.backend_device);
  std::string without(k_cuda_linux);
  without.replace(without.find(R"("cann": null)"), 12, R"("cann": null, "device": false)");
  ASSERT_TRUE(apply_python_probe(without, host));
  EXPECT_FALSE(host.system.backend_device);
  EXPECT_EQ(host.system.backend.kind, Backend::cuda);  // still the selected backend
}

TEST(SystemDetect, ReadsTheProbeLikeTheLoader) {
  BuildHost host;
  ASSERT_TRUE(apply_python_probe(k_cuda_linux, host));
  EXPECT_EQ(host.python, "/venv/bin/python");
  EXPECT_EQ(host.system.cpu, "x86_64");
  EXPECT_EQ(host.system.os, "linux");
  EXPECT_EQ(host.system.torch_version->to_string(), "2.10");
  EXPECT_EQ(host.system.cxx11_abi, true);
  EXPECT_EQ(host.system.tvm_ffi_version->to_string(), "0.1");
  EXPECT_EQ(host.system.backend.kind, Backend::cuda);
  EXPECT_EQ(host.system.backend.variant_string(), "cu128");
  EXPECT_FALSE(host.system.macos_version.has_value());
  ASSERT_TRUE(host.torch.has_value());
  EXPECT_EQ(host.torch->cuda->to_string(), "12.8");
}

TEST(SystemDetect, PicksTheBackendInTheLoadersOrder) {
  const auto backend_of = [](const std::string& torch_fields) {
    BuildHost host;
    const auto probe = R"({"executable": "py", "machine": "arm64", "system": "Darwin", "mac_ver": "26.0.1",
      "torch": {"version": "2.12.0", "cxx11": true, )" + torch_fields + "}}";
    EXPECT_TRUE(apply_python_probe(probe, host)) << probe;
    return host;
  };
  auto mac = backend_of(R"("mps": true)");
  EXPECT_EQ(mac.system.cpu, "aarch64");
  EXPECT_EQ(mac.system.macos_version->to_string(), "26.0.1");
  EXPECT_FALSE(mac.system.cxx11_abi.has_value());  // only read on Linux
  EXPECT_EQ(mac.system.backend.kind, Backend::metal);
  EXPECT_EQ(backend_of(R"("tpu": true, "cuda": "12.8")").system.backend.kind, Backend::tpu);
  EXPECT_EQ(backend_of(R"("neuron": true, "cuda": "12.8")").system.backend.kind, Backend::neuron);
  const auto rocm = backend_of(R"("hip": "6.3.42131-fa1d09cbd", "mps": true)").system.backend;
  EXPECT_EQ(rocm.kind, Backend::rocm);
  EXPECT_EQ(rocm.version.to_string(), "6.3.42131");
  EXPECT_EQ(rocm.variant_string(), "rocm63");
  EXPECT_EQ(backend_of(R"("xpu": "20250300")").system.backend.variant_string(), "xpu20253");
  EXPECT_EQ(backend_of(R"("privateuse1": "npu", "cann": "8.1")").system.backend.variant_string(), "cann81");
  EXPECT_EQ(backend_of("\"mps\": false").system.backend.kind, Backend::cpu);
}

TEST(SystemDetect, WithoutTorchUsesTheCudaRuntime) {
  BuildHost host;
  ASSERT_TRUE(apply_python_probe(
      R"({"executable": "py", "machine": "AMD64", "system": "Windows", "cudart": "12.4"})", host));
  EXPECT_EQ(host.system.cpu, "x86_64");
  EXPECT_EQ(host.system.os, "windows");
  EXPECT_FALSE(host.system.torch_version.has_value());
  EXPECT_FALSE(host.torch.has_value());
  EXPECT_EQ(host.system.backend.variant_string(), "cu124");
  EXPECT_FALSE(apply_python_probe("Traceback (most recent call last):", host));
}

TEST(SystemDetect, ParsesCompilerVersions) {
  EXPECT_EQ(parse_nvcc_version("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, "
                               "release 12.8, V12.8.93\nBuild cuda_12.8.r12.8/compiler.35583870_0")
                ->to_string(),
            "12.8");
  EXPECT_FALSE(parse_nvcc_version("nvcc 12.8").has_value());
  EXPECT_EQ(parse_icpx_version("Intel(R) oneAPI DPC++/C++ Compiler 2025.3.2 (2025.3.2.20251030)")
                ->to_string(),
            "2025.3");
}

TEST(SystemDetect, AsksPythonsInOrderAndTheCompilers) {
  FakeRunner runner;
  runner.outputs["/opt/py"] = k_cuda_linux;
  runner.outputs["/cuda/bin/nvcc"] = "Cuda compilation tools, release 13.0, V13.0.48";
  runner.outputs["icpx"] = "Intel(R) oneAPI DPC++/C++ Compiler 2026.0.0 (2026.0.0.20260101)";
  DetectOptions options;
  options.pythons = {"python3", "/opt/py"};
  options.cuda_home = "/cuda";
  const auto host = detect_build_host(runner, options);
  EXPECT_EQ(host.python, "/venv/bin/python");
  EXPECT_EQ(runner.calls.at(0).at(0), "python3");
  EXPECT_EQ(runner.calls.at(1), (std::vector<std::string>{"/opt/py", "-c", std::string(python_probe_script())}));
  EXPECT_EQ(host.toolchains.nvcc->to_string(), "13.0");
  EXPECT_FALSE(host.toolchains.hipcc);
  EXPECT_EQ(host.toolchains.icpx->to_string(), "2026.0");
}

TEST(SystemDetect, TheProbeWithoutTheDeviceIsTheSameProgramAskingLess) {
  const std::string full(python_probe_script());
  const std::string without(python_probe_script_without_device());
  ASSERT_FALSE(without.empty());
  const auto main = full.rfind("\nif __name__ == \"__main__\":\n");
  ASSERT_NE(main, std::string::npos);
  EXPECT_EQ(without.substr(0, main), full.substr(0, main));
  EXPECT_NE(without.find("    print(json.dumps(probe(device=False)))\n", main), std::string::npos);
  EXPECT_EQ(without.find("probe())"), std::string::npos);
  // The rest of the block stays: the collector off before the probe, frozen after it.
  EXPECT_NE(without.find("    gc.disable()\n", main), std::string::npos);
  EXPECT_TRUE(without.ends_with("    gc.freeze()\n"));
}

TEST(SystemDetect, NoPythonLeavesAPlainCpuSystem) {
  FakeRunner runner;
  const auto host = detect_build_host(runner, DetectOptions{});
  EXPECT_TRUE(host.python.empty());
  EXPECT_FALSE(host.torch.has_value());
  EXPECT_EQ(host.system.backend.kind, Backend::cpu);
  EXPECT_FALSE(host.toolchains.nvcc.has_value());
}

TEST(SubprocessRunner, CapturesStdoutAndExitStatus) {
  const SubprocessRunner runner;
  EXPECT_EQ(runner.run({"sh", "-c", "echo out; echo err >&2"}), std::optional<std::string>("out\n"));
  EXPECT_FALSE(runner.run({"sh", "-c", "echo partial; exit 3"}).has_value());
  EXPECT_FALSE(runner.run({"kernelhub-no-such-program-here"}).has_value());
  EXPECT_FALSE(runner.run({}).has_value());
}

}  // namespace
