// SPDX-License-Identifier: Apache-2.0
#pragma once

// The torch-free half of the C++ API (include it through <kernelhub/kernelhub.hpp>): the public
// types, and the interface of libkernelhub that kernelhub.hpp's inline functions call with a
// description of the program's libtorch. libkernelhub is compiled against this header alone, so
// it links no libtorch and one build of it serves any torch.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kernelhub {

struct KernelMetadata {
  std::string id;    // the ops namespace
  std::string name;  // "relu"
  std::uint64_t version = 0;
  std::string license;
  std::string backend;             // "cpu", "cuda", ...
  std::vector<std::string> archs;  // CUDA capabilities or ROCm targets; empty when none
};

// What to load from the Hub: exactly one of `version` (the v<N> branch) and `revision` (a
// branch, tag or commit), as in Python's `get_kernel`.
struct GetKernelOptions {
  std::optional<unsigned> version;
  std::optional<std::string> revision;
  std::optional<std::string> backend;  // "cpu", or the backend libtorch was built for
  bool trust_remote_code = false;      // skip the publisher trust check
  // Refuse the variant unless its metadata.json carries a Sigstore signature by a
  // kernels-community build workflow, or a keyed signature (`kernel-builder sign`) by a trusted
  // key, and its files match the signed digest; checked before the library is opened. Unset:
  // KERNELHUB_REQUIRE_SIGNATURE decides (off when it is unset).
  std::optional<bool> require_signature;
  // PEM public keys that keyed signatures must come from. Empty: KERNELHUB_TRUSTED_KEYS
  // (files separated by ':'), else the keys the hub publishes (kernelhub serve's config.toml).
  std::vector<std::filesystem::path> trusted_keys;
};

// libkernelhub's interface under kernelhub.hpp's functions; not for direct use.
namespace detail {

// This process as the variant choice sees it.
struct Process {
  unsigned torch_major = 0;
  unsigned torch_minor = 0;
  bool cxx11_abi = true;
  std::string cpu;                 // "x86_64", "aarch64"; empty for another CPU
  std::string backend;             // "cuda" when libtorch has CUDA, else empty (cpu)
  unsigned backend_major = 0;      // the CUDA runtime libtorch was built with
  unsigned backend_minor = 0;
};

// A variant the library opened: its library stays open for the life of the process.
struct OpenedVariant {
  KernelMetadata metadata;
  std::filesystem::path variant_path;
  void* library = nullptr;
};

OpenedVariant get_local_kernel(const std::filesystem::path& path,
                               const std::optional<std::string>& backend, const Process& process);
OpenedVariant get_kernel(const std::string& repo_id, const GetKernelOptions& options,
                         const Process& process);
OpenedVariant open_variant(const std::filesystem::path& variant_path);

}  // namespace detail

}  // namespace kernelhub
