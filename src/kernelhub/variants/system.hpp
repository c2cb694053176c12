// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <kernelhub/types/backend.hpp>
#include <kernelhub/util/expected.hpp>
#include <kernelhub/variants/release_version.hpp>

namespace kernelhub::variants {

// The compute backend the loader selected (the reference's `backends._backend()` or the
// caller's `backend=`). Versions are kept as the system reports them: CUDA "12.8", ROCm
// "6.3.42131", XPU "2025.3", CANN "8.1".
struct SystemBackend {
  types::Backend kind = types::Backend::cpu;
  ReleaseVersion version;  // cuda, rocm, xpu, cann only

  // "cuda", "rocm", ...: what `backend=` and noarch names use.
  std::string_view name() const { return types::to_string(kind); }
  // "cu128", "rocm63", "cpu": how arch variant names spell this backend.
  std::string variant_string() const;

  friend bool operator==(const SystemBackend&, const SystemBackend&) = default;
};

// Everything the loader's acceptance rules look at (loader.md §2.2). A plain value, so the
// rules are pure functions and tests can describe any machine.
struct SystemInfo {
  std::string cpu = "x86_64";  // platform.machine(), arm64 -> aarch64 on darwin, AMD64 -> x86_64 on windows
  std::string os = "linux";    // platform.system().lower()
  std::optional<ReleaseVersion> macos_version;    // darwin only; used by the Metal rule
  std::optional<ReleaseVersion> torch_version;    // major.minor; nullopt without torch
  std::optional<bool> cxx11_abi;                  // Linux with torch only
  std::optional<ReleaseVersion> tvm_ffi_version;  // major.minor; nullopt without tvm-ffi
  SystemBackend backend;
  bool free_threaded = false;  // a Py_GIL_DISABLED interpreter before Python 3.15
  // Whether `backend`'s device is present in this process (torch.cuda.is_available() for cuda
  // and rocm, torch.xpu.is_available() for xpu). A CUDA build of torch on a machine without a
  // GPU selects cuda, as the reference does; without a device, the loader prefers a cpu
  // variant (resolve_variants; a deliberate difference, issue 22 §4). True when unknown and
  // when the caller asked for the backend.
  bool backend_device = true;

  friend bool operator==(const SystemInfo&, const SystemInfo&) = default;
};

// The loader's `backend=` argument: only "cpu" or the detected backend's name are accepted.
// Error: "Invalid backend 'x', system supported backends: cpu, cuda" (the reference's text).
util::Expected<SystemBackend> select_backend(const SystemBackend& detected,
                                             std::optional<std::string_view> requested);

// select_backend applied to `system`: a requested backend is taken as asked, so no cpu
// variant is preferred over it (backend_device is set).
util::Expected<void> apply_backend(SystemInfo& system, std::optional<std::string_view> requested);

}  // namespace kernelhub::variants
