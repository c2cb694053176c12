// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <kernelhub/builder/command_runner.hpp>
#include <kernelhub/util/expected.hpp>
#include <kernelhub/variants/release_version.hpp>

// What the build's Python says about apache-tvm-ffi ([tvm-ffi] kernels): its version names the
// variant (tvm-ffi01-...), as the reference's CMake preamble and loader both read it.
namespace kernelhub::builder {

struct TvmFfiEnvironment {
  variants::ReleaseVersion version;  // major.minor of tvm_ffi.__version__ ("0.1.15.post2": 0.1)
  std::string cpu;                   // normalised: x86_64, aarch64
  std::string os;                    // linux, darwin, windows
};

// The Python program whose one line of JSON parse_tvm_ffi_probe reads.
std::string_view tvm_ffi_probe_script();

// Parses the probe's output. Errors name the missing or malformed field.
util::Expected<TvmFfiEnvironment> parse_tvm_ffi_probe(std::string_view json_text);

// Runs the probe with `python`: nullopt when tvm_ffi cannot be imported there, an error when
// it imports but the answer cannot be read.
util::Expected<std::optional<TvmFfiEnvironment>> detect_tvm_ffi(const std::filesystem::path& python,
                                                                 CommandRunner& runner);

}  // namespace kernelhub::builder
