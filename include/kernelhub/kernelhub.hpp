// SPDX-License-Identifier: Apache-2.0
#pragma once

// kernelhub's C++ API: load a Hub kernel's built variant into a libtorch program and call its
// ops through the Torch dispatcher. The variant's `<id>.abi3.so` is dlopen'ed with RTLD_LOCAL
// (its Python module init is never run, so no Python is needed); its static initialisers
// register the ops under the namespace `<id>`, so two builds of one kernel live side by side.
//
// Everything that needs libtorch is in this header, compiled into the program with the program's
// own torch: what this process is (torch version, C++ ABI, CUDA runtime) and the dispatcher
// calls. The library libkernelhub links no libtorch; it is told the process in a plain
// description (detail::Process), so one build of it serves any torch.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

// libkernelhub passes std::string and std::filesystem::path to the program: both sides must use
// libstdc++'s C++11 ABI, as libtorch 2.7 and later do everywhere.
#if defined(_GLIBCXX_USE_CXX11_ABI) && !_GLIBCXX_USE_CXX11_ABI
#error "kernelhub's C++ API needs _GLIBCXX_USE_CXX11_ABI=1 (a libtorch built with the C++11 ABI)"
#endif

#include <ATen/Context.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/version.h>

#include <kernelhub/library.hpp>

namespace kernelhub {

namespace detail {

// Described from the program's libtorch: the headers it compiles against and its CUDA hooks.
inline Process this_process() {
  Process process;
  process.torch_major = TORCH_VERSION_MAJOR;
  process.torch_minor = TORCH_VERSION_MINOR;
#if defined(_GLIBCXX_USE_CXX11_ABI)
  process.cxx11_abi = _GLIBCXX_USE_CXX11_ABI != 0;
#endif
#if defined(__x86_64__)
  process.cpu = "x86_64";
#elif defined(__aarch64__)
  process.cpu = "aarch64";
#endif
  if (at::globalContext().hasCUDA()) {
    // Like torch.version.cuda: the CUDA runtime libtorch was built with (12080 -> 12.8).
    const long cudart = at::detail::getCUDAHooks().versionCUDART();
    process.backend = "cuda";
    process.backend_major = static_cast<unsigned>(cudart / 1000);
    process.backend_minor = static_cast<unsigned>((cudart % 1000) / 10);
  }
  return process;
}

}  // namespace detail

class KernelHandle;

// Loads the variant of a local kernel that fits this process (variant folders in `path`, then
// `path/build`, else `path` itself; loader.md §1.1). `backend` is "cpu" or the backend libtorch
// was built for. Throws std::runtime_error with the decision trace when nothing fits. Loading
// the same variant twice returns the same library.
inline KernelHandle get_local_kernel(const std::filesystem::path& path,
                                     std::optional<std::string> backend = std::nullopt);

// Loads `repo_id` from the Hub (HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE, KERNELS_CACHE or the
// huggingface_hub cache are honoured, as in Python): the variant that fits this libtorch is
// downloaded into the shared cache, checked against its blob names, then opened like
// get_local_kernel. Throws std::runtime_error with the reference's texts (the decision trace
// when no variant fits); warnings (an older version, a redirect) go to stderr.
inline KernelHandle get_kernel(const std::string& repo_id, const GetKernelOptions& options);

// Opens a variant folder (build/<variant>) that the caller already chose.
inline KernelHandle open_variant(const std::filesystem::path& variant_path);

class KernelHandle {
 public:
  KernelHandle() = default;  // no kernel: the functions below make handles

  const std::string& id() const { return m_variant.metadata.id; }
  const KernelMetadata& metadata() const { return m_variant.metadata; }
  const std::filesystem::path& variant_path() const { return m_variant.variant_path; }

  // The op `<id>::<name>`; throws c10::Error when the kernel has no such op.
  c10::OperatorHandle op(std::string_view name) const {
    const std::string full = m_variant.metadata.id + "::" + std::string(name);
    return c10::Dispatcher::singleton().findSchemaOrThrow(full.c_str(), "");
  }

  // Calls op `name` with the signature `Return(Args...)`, e.g.
  // `handle.call<at::Tensor, at::Tensor&, const at::Tensor&>("relu", out, x)`.
  template <typename Return, typename... Args>
  Return call(std::string_view name, Args... args) const {
    return op(name).typed<Return(Args...)>().call(std::forward<Args>(args)...);
  }

 private:
  friend KernelHandle get_local_kernel(const std::filesystem::path&, std::optional<std::string>);
  friend KernelHandle get_kernel(const std::string&, const GetKernelOptions&);
  friend KernelHandle open_variant(const std::filesystem::path&);
  explicit KernelHandle(detail::OpenedVariant variant) : m_variant(std::move(variant)) {}
  detail::OpenedVariant m_variant;
};

inline KernelHandle get_local_kernel(const std::filesystem::path& path,
                                     std::optional<std::string> backend) {
  return KernelHandle(detail::get_local_kernel(path, backend, detail::this_process()));
}

inline KernelHandle get_kernel(const std::string& repo_id, const GetKernelOptions& options) {
  return KernelHandle(detail::get_kernel(repo_id, options, detail::this_process()));
}

inline KernelHandle open_variant(const std::filesystem::path& variant_path) {
  return KernelHandle(detail::open_variant(variant_path));
}

}  // namespace kernelhub
