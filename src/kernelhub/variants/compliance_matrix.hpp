// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/types/backend.hpp>
#include <kernelhub/types/version.hpp>
#include <kernelhub/util/expected.hpp>

// The build matrix: which Torch version is built for which backend version on which system.
// It lives in data/compliance_matrix.json (a transcription of the reference's
// nix-builder/versions.nix), compiled into the binary, so a new Torch release touches no C++.
namespace kernelhub::variants {

// A version as the matrix writes it: the text is kept because the reference groups build
// sets by it ("cuda-12.6") and flattens it into names.
struct MatrixVersion {
  std::string text;  // "2025.3.2"
  types::Version version;

  friend bool operator==(const MatrixVersion&, const MatrixVersion&) = default;
};

// One versions.nix entry: a Torch version built for one backend (version) on some systems.
struct MatrixConfig {
  MatrixVersion torch;
  types::Backend backend = types::Backend::cpu;
  std::optional<MatrixVersion> backend_version;  // cuda, rocm, xpu
  std::vector<std::string> systems;              // Nix systems: "x86_64-linux", "aarch64-darwin"
  bool bundle = false;                           // part of the default bundle build
  std::optional<MatrixVersion> tvm_ffi;          // set when tvm-ffi kernels build on it too

  friend bool operator==(const MatrixConfig&, const MatrixConfig&) = default;
};

struct ComplianceMatrix {
  std::vector<std::string> systems;
  // build.toml bounds that are absent default to these (the reference's build.nix).
  types::Version cuda_minver;
  types::Version cuda_maxver;
  types::Version torch_minver;
  types::Version torch_maxver;
  std::vector<MatrixConfig> configs;  // in versions.nix order, which later rules depend on

  friend bool operator==(const ComplianceMatrix&, const ComplianceMatrix&) = default;
};

// Errors name the entry and key: "compliance matrix: configs[3].backend: unknown backend ...".
util::Expected<ComplianceMatrix> parse_compliance_matrix(std::string_view json_text);

// The matrix compiled into this binary.
util::Expected<ComplianceMatrix> builtin_compliance_matrix();

}  // namespace kernelhub::variants
