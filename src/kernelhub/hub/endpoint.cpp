// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/endpoint.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

#include <kernelhub/util/file_io.hpp>

#ifndef KERNELHUB_VERSION
#define KERNELHUB_VERSION "0"
#endif

namespace kernelhub::hub {

namespace {

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

std::optional<std::string> non_empty(const EnvLookup& env, std::string_view name) {
  auto value = env(name);
  if (value && !value->empty()) {
    return value;
  }
  return std::nullopt;
}

// `~` at the start becomes $HOME, as os.path.expanduser does.
std::string expand_home(const EnvLookup& env, std::string path) {
  if (!path.empty() && path.front() == '~' && (path.size() == 1 || path[1] == '/')) {
    if (auto home = non_empty(env, "HOME")) {
      path.replace(0, 1, *home);
    }
  }
  return path;
}

// Read with open(2) and read(2): an ifstream's first use in a process sets up its locale
// facets, a measurable part of a warm load that reads no more than this file.
std::optional<std::string> read_token_file(const std::string& path) {
  const auto text = util::read_file(path);
  if (!text) {
    return std::nullopt;
  }
  auto token = trim(*text);
  if (token.empty()) {
    return std::nullopt;
  }
  return token;
}

}  // namespace

EnvLookup process_environment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) {
      return std::nullopt;
    }
    return std::string(value);
  };
}

bool env_flag(const EnvLookup& env, std::string_view name) {
  auto value = env(name);
  if (!value) {
    return false;
  }
  std::string upper = trim(*value);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return upper == "1" || upper == "ON" || upper == "YES" || upper == "TRUE";
}

std::string normalize_endpoint(std::string_view url) {
  std::string result(url);
  while (!result.empty() && result.back() == '/') {
    result.pop_back();
  }
  return result;
}

std::string hf_home(const EnvLookup& env) {
  if (auto home = non_empty(env, "HF_HOME")) {
    return expand_home(env, *home);
  }
  if (auto xdg = non_empty(env, "XDG_CACHE_HOME")) {
    return expand_home(env, *xdg) + "/huggingface";
  }
  return expand_home(env, "~/.cache/huggingface");
}

std::string default_user_agent() {
  return fmt::format("kernelhub/{}; hf_hub/compatible", KERNELHUB_VERSION);
}

Endpoint endpoint_from(const EnvLookup& env) {
  Endpoint endpoint;
  if (auto url = non_empty(env, "HF_ENDPOINT")) {
    endpoint.url = normalize_endpoint(*url);
  }
  endpoint.user_agent = default_user_agent();
  endpoint.offline = env_flag(env, "HF_HUB_OFFLINE") || env_flag(env, "TRANSFORMERS_OFFLINE");
  if (env_flag(env, "HF_HUB_DISABLE_IMPLICIT_TOKEN")) {
    return endpoint;
  }
  // The same order as huggingface_hub's get_token (OIDC and Colab aside).
  for (std::string_view name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}) {
    if (auto value = env(name)) {
      auto token = trim(*value);
      if (!token.empty()) {
        endpoint.token = token;
        return endpoint;
      }
    }
  }
  std::string token_path = hf_home(env) + "/token";
  if (auto path = non_empty(env, "HF_TOKEN_PATH")) {
    token_path = expand_home(env, *path);
  }
  endpoint.token = read_token_file(token_path);
  return endpoint;
}

Endpoint Endpoint::from_environment() { return endpoint_from(process_environment()); }

}  // namespace kernelhub::hub
