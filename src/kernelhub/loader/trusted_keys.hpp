// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <kernelhub/hub/endpoint.hpp>
#include <kernelhub/hub/http_transport.hpp>
#include <kernelhub/util/expected.hpp>
#include <kernelhub/verify/trusted_key.hpp>

// The keys a keyed signature (a private hub's `kernel-builder sign`) must come from, for the
// loader's require_signature. Local keys win outright: the call's key files (Python's
// trusted_keys=, C++ GetKernelOptions::trusted_keys), else KERNELHUB_TRUSTED_KEYS. Only when
// neither names any are the hub's published keys (`kernelhub serve`, /api/kernelhub/trusted-keys)
// used, so an air-gapped or pinned deployment never takes keys from the server it verifies.
namespace kernelhub::loader {

// Where the hub's keys are fetched from and cached (<cache>/.kernelhub/trusted-keys/, one file
// per endpoint, so the offline loads that the cache serves can verify too).
struct HubKeySource {
  hub::Endpoint endpoint;
  std::filesystem::path cache_dir;
  std::shared_ptr<hub::Transport> transport;  // null: libcurl
  static HubKeySource from_environment();
};

struct KeyOptions {
  std::vector<std::filesystem::path> files;  // the call's key files; empty: not given
  std::optional<HubKeySource> hub;           // nullopt: no hub to ask
};

// KERNELHUB_TRUSTED_KEYS: PEM files separated by ':' (empty entries skipped); unset or empty
// gives no files.
std::vector<std::filesystem::path> trusted_key_files_from_environment();

// The keys `options` and the environment select. Online the hub's list is fetched and cached
// (a hub that has no such endpoint, such as huggingface.co, has no keys); offline, or when the
// fetch fails, the cached list is used, and with none the failure is the error.
util::Expected<std::vector<verify::TrustedKey>> resolve_trusted_keys(const KeyOptions& options);

// The cache file of an endpoint's keys.
std::filesystem::path trusted_keys_cache_file(const std::filesystem::path& cache_dir,
                                              const std::string& endpoint_url);

}  // namespace kernelhub::loader
