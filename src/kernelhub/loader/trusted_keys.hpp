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

// Where the hub's keys are fetched from, and the folder where the last answer is kept (one file
// per endpoint) so that offline loads can verify too. That folder is outside the kernel cache,
// in this user's state folder: whoever can write the cache (a shared cache, a mounted volume)
// must not be able to add a key that offline loads then trust (issue 20 item 3). A kept file
// that is not this user's, or that others may write, is refused, as is its folder.
struct HubKeySource {
  hub::Endpoint endpoint;
  // <state>/kernelhub/trusted-keys; empty when there is no state folder (no HOME): the keys are
  // then fetched, never kept, and an offline load has none.
  std::filesystem::path key_dir;
  std::shared_ptr<hub::Transport> transport;  // null: libcurl
  static HubKeySource from_environment();
};

// $XDG_STATE_HOME/kernelhub/trusted-keys when XDG_STATE_HOME is an absolute path, else
// $HOME/.local/state/kernelhub/trusted-keys; empty when neither is set.
std::filesystem::path hub_key_dir_from_environment();

struct KeyOptions {
  std::vector<std::filesystem::path> files;  // the call's key files; empty: not given
  std::optional<HubKeySource> hub;           // nullopt: no hub to ask
};

// KERNELHUB_TRUSTED_KEYS: PEM files separated by ':' (empty entries skipped); unset or empty
// gives no files.
std::vector<std::filesystem::path> trusted_key_files_from_environment();

// The keys `options` and the environment select. Online the hub's list is fetched and kept
// (a hub that has no such endpoint, such as huggingface.co, has no keys); offline, or when the
// fetch fails, the kept list is used, and with none the failure is the error.
util::Expected<std::vector<verify::TrustedKey>> resolve_trusted_keys(const KeyOptions& options);

// The file that keeps an endpoint's keys in `key_dir`.
std::filesystem::path trusted_keys_file(const std::filesystem::path& key_dir,
                                        const std::string& endpoint_url);

}  // namespace kernelhub::loader
