// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include <kernelhub/util/expected.hpp>
#include <kernelhub/variants/build_host.hpp>
#include <kernelhub/variants/program_runner.hpp>

// Detection of the local machine (loader.md §2.2): asks the active Python about torch,
// tvm-ffi and the platform, and the CUDA/ROCm/oneAPI compilers for their versions. All
// process I/O goes through a ProgramRunner; the parsing is pure and tested on its own.
namespace kernelhub::variants {

struct DetectOptions {
  std::vector<std::string> pythons = {"python3", "python"};  // first that answers wins
  std::optional<std::string> cuda_home;                      // nvcc is also looked for in <cuda_home>/bin

  // KERNELHUB_PYTHON (only that interpreter is asked), else the python3 beside the running
  // program first (the environment it is installed in), then PATH's; CUDA_HOME / CUDA_PATH.
  static DetectOptions from_environment();
};

// The python3 (or python) in the folder of the running executable, when it has one: the
// interpreter of the virtual environment a program installed into `.venv/bin` belongs to.
std::optional<std::string> own_environment_python();

BuildHost detect_build_host(const ProgramRunner& runner, const DetectOptions& options);

// The Python program whose single line of JSON output parse_python_probe reads.
std::string_view python_probe_script();
// The same program without the question whether torch's backend has a device (torch's
// `cuda.is_available()`): its answer then depends only on the interpreter and its packages, so
// it can be cached (builder/probe_cache.hpp); the "device" key is absent.
std::string_view python_probe_script_without_device();

// Fills `host.system` (and `host.torch`) from the probe's JSON; the backend is chosen in the
// loader's order: TPU, Neuron, CUDA, ROCm, Metal (MPS), XPU, CANN (npu), else CPU; without
// torch, the CUDA runtime the probe found through ctypes, else CPU.
util::Expected<void> apply_python_probe(std::string_view json_text, BuildHost& host);
// The same from the answer already parsed (the Python package hands over the probe's dict,
// made into JSON without a text in between).
util::Expected<void> apply_parsed_probe(const nlohmann::json& probe, BuildHost& host);

// "Cuda compilation tools, release 12.8, V12.8.93" -> 12.8.
std::optional<ReleaseVersion> parse_nvcc_version(std::string_view output);
// The first "<digits>.<digits>" in `icpx --version`, as the reference's CMake takes it.
std::optional<ReleaseVersion> parse_icpx_version(std::string_view output);

}  // namespace kernelhub::variants
