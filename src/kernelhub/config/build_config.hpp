// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <kernelhub/types/backend.hpp>
#include <kernelhub/types/git_url.hpp>
#include <kernelhub/types/kernel_dependency.hpp>
#include <kernelhub/types/kernel_name.hpp>
#include <kernelhub/types/version.hpp>
#include <kernelhub/util/diagnostic.hpp>
#include <kernelhub/util/expected.hpp>

// The typed model of build.toml at edition 5 (builder.md §2.3). Every older edition is read
// into this same model (config/build_config_reader.hpp). Optional keys are std::optional so a
// writer can tell "absent" from "empty list".
namespace kernelhub::config {

inline constexpr int k_current_edition = 5;

// `kernel-depends` entry: shared with metadata.json, so it lives in the types layer.
using KernelDependency = types::KernelDependency;

// Per-backend tables under [general]: [general.cuda], [general.neuron], [general.xpu],
// [general.tpu]. Only cuda has minver/maxver; tpu has no kernel-depends.
struct BackendGeneral {
  std::optional<types::Version> minver;
  std::optional<types::Version> maxver;
  std::optional<std::vector<KernelDependency>> kernel_depends;
  std::optional<std::vector<std::string>> python_depends;

  friend bool operator==(const BackendGeneral&, const BackendGeneral&) = default;
};

struct Hub {
  std::optional<std::string> repo_id;
  std::optional<std::string> branch;

  friend bool operator==(const Hub&, const Hub&) = default;
};

struct General {
  types::KernelName name;
  std::uint64_t version = 1;
  std::string license;
  std::optional<types::GitUrl> upstream;
  std::optional<types::GitUrl> source;
  std::vector<types::Backend> backends;
  std::optional<std::vector<KernelDependency>> kernel_depends;
  std::optional<std::vector<std::string>> python_depends;
  std::optional<BackendGeneral> cuda;
  std::optional<BackendGeneral> neuron;
  std::optional<BackendGeneral> xpu;
  std::optional<BackendGeneral> tpu;
  std::optional<Hub> hub;

  friend bool operator==(const General&, const General&) = default;

  // The [general.<backend>] table of `backend` (cuda, neuron, xpu, tpu); empty for the others.
  const std::optional<BackendGeneral>& backend_table(types::Backend backend) const;
};

// `torch.stable-abi`: one version for every backend, or a per-backend table.
using TorchStableAbi = std::variant<types::Version, std::map<types::Backend, types::Version>>;

// [torch]: an ahead-of-time compiled Torch extension.
struct Torch {
  std::optional<std::vector<std::string>> src;
  std::optional<std::vector<std::string>> include;
  std::optional<std::vector<std::string>> pyext;
  std::optional<types::Version> minver;
  std::optional<types::Version> maxver;
  std::optional<std::vector<std::string>> cxx_flags;
  std::optional<TorchStableAbi> stable_abi;

  friend bool operator==(const Torch&, const Torch&) = default;
};

// [torch-noarch]: a pure-Python / JIT Torch kernel. The archs are copied into metadata.
struct TorchNoarch {
  std::optional<std::vector<std::string>> pyext;
  std::optional<std::vector<std::string>> cuda_capabilities;
  std::optional<std::vector<std::string>> rocm_archs;

  friend bool operator==(const TorchNoarch&, const TorchNoarch&) = default;
};

// [tvm-ffi]: an ahead-of-time compiled TVM-FFI extension.
struct TvmFfi {
  std::vector<std::string> src;
  std::optional<std::vector<std::string>> include;
  std::optional<std::vector<std::string>> pyext;
  std::optional<std::vector<std::string>> cxx_flags;

  friend bool operator==(const TvmFfi&, const TvmFfi&) = default;
};

using Framework = std::variant<Torch, TorchNoarch, TvmFfi>;

// Third-party C++ dependencies a [kernel.*] may name in `depends`.
enum class Dependency {
  cutlass_2_10,
  cutlass_3_5,
  cutlass_3_6,
  cutlass_3_8,
  cutlass_3_9,
  cutlass_4_0,
  cutlass_4_4,
  cutlass_4_5,
  sycl_tla,
  metal_cpp,
  torch,
};

// The spelling used in build.toml ("cutlass_3_6", "metal-cpp", ...).
std::string_view to_string(Dependency dependency);
// Every spelling, in enum order.
std::span<const std::string_view> dependency_names();
util::Expected<Dependency> parse_dependency(std::string_view text);

// [kernel.<name>]: one native component for one backend. Backend-specific keys are only set
// for their backend (the reader rejects them elsewhere).
struct Kernel {
  std::string name;  // the <name> of [kernel.<name>]
  types::Backend backend = types::Backend::cpu;
  std::vector<Dependency> depends;
  std::vector<std::string> src;
  std::optional<std::vector<std::string>> include;
  std::optional<std::vector<std::string>> cxx_flags;
  // cuda
  std::optional<std::vector<std::string>> cuda_capabilities;
  std::optional<std::vector<std::string>> cuda_flags;
  std::optional<types::Version> cuda_minver;
  // rocm
  std::optional<std::vector<std::string>> rocm_archs;
  std::optional<std::vector<std::string>> hip_flags;
  // xpu
  std::optional<std::vector<std::string>> sycl_flags;

  friend bool operator==(const Kernel&, const Kernel&) = default;
};

struct BuildConfig {
  General general;
  Framework framework;
  std::vector<Kernel> kernels;  // in file order

  friend bool operator==(const BuildConfig&, const BuildConfig&) = default;

  bool is_noarch() const { return std::holds_alternative<TorchNoarch>(framework); }
  // Backends of general.backends that have at least one [kernel.*] of that backend.
  std::vector<types::Backend> backends_with_kernels() const;
  // Python dependencies that apply to `backend`: general ones plus that backend's table.
  std::vector<std::string> python_depends_for(types::Backend backend) const;
  // The `torch.stable-abi` version that applies to `backend` (the one version, or its entry
  // in the per-backend table); empty when `backend` is built without the stable ABI.
  std::optional<types::Version> stable_abi_for(types::Backend backend) const;
};

// Where each key was written, for diagnostics raised after reading (by the builder, say).
// Keys are dotted TOML paths: "general.backends", "kernel.relu.cuda-capabilities".
using SourceMap = std::map<std::string, util::SourceLocation>;

struct LoadedBuildConfig {
  BuildConfig config;
  int source_edition = k_current_edition;  // 1..5: the edition the file was written in
  SourceMap locations;
  std::string file_name;  // as given to the reader, used in diagnostics
  std::string text;       // the file's text, for rendering source lines
};

}  // namespace kernelhub::config
