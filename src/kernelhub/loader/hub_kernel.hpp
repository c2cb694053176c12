// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <kernelhub/hub/endpoint.hpp>
#include <kernelhub/hub/hub_client.hpp>
#include <kernelhub/hub/http_transport.hpp>
#include <kernelhub/loader/device_arch.hpp>
#include <kernelhub/util/expected.hpp>
#include <kernelhub/variants/acceptance.hpp>
#include <kernelhub/variants/system.hpp>

// Loads from the Hub (loader.md §5.2): the kernels loader's `install_kernel` flow over the
// shared huggingface_hub cache. Online: publisher trust, version or revision, the
// kernel-status.toml redirect, the variant choice (arch-excluded variants rejected in the
// trace), the download of that variant only, then a check of every cached file against its
// blob name so a corrupted cache is repaired (online) or refused (offline), never imported, and
// of the variant's files against the digest in its metadata.json (digest_check.hpp).
// Offline (HF_HUB_OFFLINE or local_files_only): the same from refs/ and snapshots/, with no
// request at all. Errors carry the reference's texts and the Python exception class to raise.
namespace kernelhub::loader {

struct HubLoadContext {  // everything a Hub load reads from the environment
  hub::Endpoint endpoint;                // HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE
  std::filesystem::path cache_dir;       // KERNELS_CACHE, else HF_HUB_CACHE, else HF_HOME/hub
  variants::SystemInfo system;           // this machine (backend= is applied per request)
  DeviceArch device;
  // Where kernel-status.toml goes: the reference downloads it without cache_dir, so
  // KERNELS_CACHE does not apply (HF_HUB_CACHE, else HF_HOME/hub). Empty: cache_dir.
  std::filesystem::path status_cache_dir;
  // The HTTP seam and client settings; the tests put a fake Hub here. Null: libcurl.
  std::shared_ptr<hub::Transport> transport;
  hub::ClientOptions client_options;
  // How long every entry of a checked variant must have been still before it is sealed
  // (variant_seal.hpp); tests that change files on purpose set 0 and wait out the clock tick.
  int seal_settle_seconds = 2;
  static HubLoadContext from_environment(variants::SystemInfo system, DeviceArch device);
};

struct HubKernelRequest {
  std::string repo_id;
  std::optional<unsigned> version;  // exactly one of version and revision
  std::optional<std::string> revision;
  std::optional<std::string> backend;  // the backend= argument
  bool local_files_only = false;       // HF_HUB_OFFLINE implies it
  bool check_trust = false;            // get_kernel without trust_remote_code: true
  bool follow_redirects = true;        // kernel-status.toml (online only)
  // Whether this process already imported the variant at a path. Such a load hands back the
  // module imported before, whose files were checked when it was imported, so the digest check
  // (which reads every file's stamp) is not repeated for it. Unset: every load checks.
  std::function<bool(const std::filesystem::path&)> already_loaded;
};

// The Python exception each failure becomes: ValueError, FileNotFoundError, ImportError,
// OSError.
enum class LoadErrorKind { value, not_found, import_error, io };

struct LoadError : util::Error {
  LoadErrorKind kind = LoadErrorKind::value;
};

template <typename T>
using LoadResult = tl::expected<T, LoadError>;

inline tl::unexpected<LoadError> load_fail(LoadErrorKind kind, std::string message) {
  LoadError error;
  error.message = std::move(message);
  error.kind = kind;
  return tl::unexpected<LoadError>(std::move(error));
}

struct HubKernel {
  std::filesystem::path variant_path;  // <cache>/kernels--o--n/snapshots/<commit>/build/<variant>
  std::string repo_id;                 // RepoInfo: the repo asked for (not the redirect target)
  std::string revision;  // RepoInfo.revision: commit for version=, raw string for revision=
  std::string commit;
  std::string variant;
  variants::Resolution resolution;    // decision trace, best first
  std::vector<std::string> warnings;  // "You are using version 1 of ...", "'a' redirected to 'b'"
};

LoadResult<HubKernel> install_hub_kernel(const HubLoadContext& context,
                                         const HubKernelRequest& request);

// The two queries warn as install_hub_kernel does when the version asked for is not the
// newest (the reference logs it from every call that resolves a version).
struct HubVariants {
  variants::Resolution resolution;  // decision trace, best first
  std::vector<std::string> warnings;
};

struct HubAvailability {
  bool available = false;
  std::vector<std::string> warnings;
};

// The decisions for every variant of the revision (kernels' get_kernel_variants): no trust
// check, no redirect, no download; archs are not read (the reference does not either).
LoadResult<HubVariants> hub_kernel_variants(const HubLoadContext& context,
                                            const HubKernelRequest& request);

// Whether a variant fits this machine (kernels' has_kernel): false when none does, when the
// only fitting ones exclude this GPU's arch, or when the chosen variant has no metadata.json.
// The trust check runs when asked, as in kernels 0.17 (a ValueError, not false).
LoadResult<HubAvailability> has_hub_kernel(const HubLoadContext& context,
                                           const HubKernelRequest& request);

// A version resolved to its commit (a revision comes back as given), with the outdated-version
// warning: what kernels' LayerRepository resolves lazily before it loads. No trust check, no
// redirect, no download; offline it reads the cached refs/v<N>.
struct HubRevision {
  std::string revision;
  std::vector<std::string> warnings;
};

LoadResult<HubRevision> resolve_hub_revision(const HubLoadContext& context,
                                             const HubKernelRequest& request);

}  // namespace kernelhub::loader

// KH_LOAD_TRY(expr): KH_TRY for a LoadResult<T> (not void), so the error kind travels up.
#define KH_LOAD_TRY(expr)                                         \
  __extension__({                                                 \
    auto kh_load_try_result_ = (expr);                            \
    if (!kh_load_try_result_) {                                   \
      return tl::unexpected<::kernelhub::loader::LoadError>(      \
          std::move(kh_load_try_result_).error());                \
    }                                                             \
    std::move(kh_load_try_result_).value();                       \
  })
