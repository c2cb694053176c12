// SPDX-License-Identifier: Apache-2.0
#pragma once

// kernelhub's C++ API: load a Hub kernel's built variant into a libtorch program and call its
// ops through the Torch dispatcher. The variant's `<id>.abi3.so` is dlopen'ed with RTLD_LOCAL
// (its Python module init is never run, so no Python is needed); its static initialisers
// register the ops under the namespace `<id>`, so two builds of one kernel live side by side.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ATen/core/dispatch/Dispatcher.h>

namespace kernelhub {

struct KernelMetadata {
  std::string id;    // the ops namespace
  std::string name;  // "relu"
  std::uint64_t version = 0;
  std::string license;
  std::string backend;             // "cpu", "cuda", ...
  std::vector<std::string> archs;  // CUDA capabilities or ROCm targets; empty when none
};

class KernelHandle {
 public:
  const std::string& id() const { return m_metadata.id; }
  const KernelMetadata& metadata() const { return m_metadata; }
  const std::filesystem::path& variant_path() const { return m_variant_path; }

  // The op `<id>::<name>`; throws c10::Error when the kernel has no such op.
  c10::OperatorHandle op(std::string_view name) const;

  // Calls op `name` with the signature `Return(Args...)`, e.g.
  // `handle.call<at::Tensor, at::Tensor&, const at::Tensor&>("relu", out, x)`.
  template <typename Return, typename... Args>
  Return call(std::string_view name, Args... args) const {
    return op(name).typed<Return(Args...)>().call(std::forward<Args>(args)...);
  }

 private:
  friend KernelHandle open_variant(const std::filesystem::path&);
  KernelMetadata m_metadata;
  std::filesystem::path m_variant_path;
  void* m_library = nullptr;  // kept open for the life of the process
};

// Loads the variant of a local kernel that fits this process (variant folders in `path`, then
// `path/build`, else `path` itself; loader.md §1.1). `backend` is "cpu" or the backend libtorch
// was built for. Throws std::runtime_error with the decision trace when nothing fits. Loading
// the same variant twice returns the same library.
KernelHandle get_local_kernel(const std::filesystem::path& path,
                              std::optional<std::string> backend = std::nullopt);

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

// Loads `repo_id` from the Hub (HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE, KERNELS_CACHE or the
// huggingface_hub cache are honoured, as in Python): the variant that fits this libtorch is
// downloaded into the shared cache, checked against its blob names, then opened like
// get_local_kernel. Throws std::runtime_error with the reference's texts (the decision trace
// when no variant fits); warnings (an older version, a redirect) go to stderr.
KernelHandle get_kernel(const std::string& repo_id, const GetKernelOptions& options);

// Opens a variant folder (build/<variant>) that the caller already chose.
KernelHandle open_variant(const std::filesystem::path& variant_path);

}  // namespace kernelhub
