// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

// Where the Hub is and who we are, read from the environment as huggingface_hub reads it
// (hub-api.md §1.1, §1.3, §5.1, §6).
namespace kernelhub::hub {

inline constexpr std::string_view k_default_endpoint = "https://huggingface.co";

struct Endpoint {
  std::string url = std::string(k_default_endpoint);  // no trailing slash; may carry a path
  std::optional<std::string> token;                    // sent as `authorization: Bearer`
  std::string user_agent;
  // HF_HUB_OFFLINE: every call fails with ErrorKind::offline before any network I/O.
  bool offline = false;

  // HF_ENDPOINT, HF_TOKEN / HUGGING_FACE_HUB_TOKEN, then the token file (HF_TOKEN_PATH, else
  // $HF_HOME/token), HF_HUB_DISABLE_IMPLICIT_TOKEN, HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE.
  static Endpoint from_environment();
};

// Reads an environment variable; the tests pass a map instead of the process environment.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;
EnvLookup process_environment();

Endpoint endpoint_from(const EnvLookup& env);
// `$HF_HOME`, else `$XDG_CACHE_HOME/huggingface`, else `~/.cache/huggingface`.
std::string hf_home(const EnvLookup& env);
// "1", "ON", "YES", "TRUE" (any case) as huggingface_hub's `_is_true`.
bool env_flag(const EnvLookup& env, std::string_view name);
// Strips one trailing slash (several, in fact) from an endpoint.
std::string normalize_endpoint(std::string_view url);
// "kernelhub/<version>; curl/<version>".
std::string default_user_agent();

}  // namespace kernelhub::hub
