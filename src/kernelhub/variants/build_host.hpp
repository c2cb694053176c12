// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

#include <kernelhub/variants/release_version.hpp>
#include <kernelhub/variants/system.hpp>

namespace kernelhub::variants {

// What the active Python's torch was built for (torch.version.*, torch.backends.*).
struct TorchBuild {
  ReleaseVersion version;                // major.minor of torch.__version__
  std::optional<ReleaseVersion> cuda;    // torch.version.cuda
  std::optional<ReleaseVersion> hip;     // torch.version.hip, before any '-'
  std::optional<std::string> xpu;        // torch.version.xpu, verbatim
  bool mps = false;                      // torch.backends.mps.is_available()
  bool tpu = false;                      // hasattr(torch.backends, "tpu")

  friend bool operator==(const TorchBuild&, const TorchBuild&) = default;
};

// The compilers a local build of each backend needs, as found in PATH.
struct Toolchains {
  std::optional<ReleaseVersion> nvcc;  // CUDA toolkit release ("12.8")
  bool hipcc = false;
  std::optional<ReleaseVersion> icpx;  // oneAPI DPC++ major.minor ("2025.3")

  friend bool operator==(const Toolchains&, const Toolchains&) = default;
};

// This machine as a kernel build sees it: the loader's view of it plus the build tools.
struct BuildHost {
  SystemInfo system;
  std::string python;  // the interpreter that answered the probe; empty when none did
  std::optional<TorchBuild> torch;
  Toolchains toolchains;

  friend bool operator==(const BuildHost&, const BuildHost&) = default;
};

}  // namespace kernelhub::variants
