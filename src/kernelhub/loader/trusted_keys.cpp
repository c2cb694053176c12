// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/trusted_keys.hpp>

#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include <kernelhub/cache/cache_location.hpp>
#include <kernelhub/hub/hub_client.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::loader {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_variable = "KERNELHUB_TRUSTED_KEYS";

util::Expected<std::vector<verify::TrustedKey>> load_files(const std::vector<fs::path>& files,
                                                           std::string_view origin) {
  std::vector<verify::TrustedKey> keys;
  for (const fs::path& file : files) {
    auto loaded = verify::load_trusted_keys(file);
    if (!loaded) {
      return util::fail(fmt::format("{}: {}", origin, loaded.error().message));
    }
    keys.insert(keys.end(), loaded->begin(), loaded->end());
  }
  return keys;
}

// The cached list is the PEM blocks one after another; an empty file records a hub that
// publishes no key, which is an answer too.
util::Expected<std::vector<verify::TrustedKey>> parse_cached(const std::string& text,
                                                             const std::string& source) {
  if (text.find_first_not_of(" \n") == std::string::npos) {
    return std::vector<verify::TrustedKey>{};
  }
  return verify::parse_trusted_keys(text, source);
}

}  // namespace

HubKeySource HubKeySource::from_environment() {
  const auto env = hub::process_environment();
  return HubKeySource{hub::endpoint_from(env), cache::kernels_cache_dir(env), nullptr};
}

std::vector<fs::path> trusted_key_files_from_environment() {
  std::vector<fs::path> files;
  const char* raw = std::getenv(k_variable);
  if (raw == nullptr) {
    return files;
  }
  std::string_view rest(raw);
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string_view entry = rest.substr(0, colon);
    if (!entry.empty()) {
      files.emplace_back(std::string(entry));
    }
    rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
  }
  return files;
}

fs::path trusted_keys_cache_file(const fs::path& cache_dir, const std::string& endpoint_url) {
  // Named by the endpoint's hash: URLs hold characters no file name should.
  const std::string name = verify::hex_lower(verify::sha256(endpoint_url)).substr(0, 32);
  return cache_dir / ".kernelhub" / "trusted-keys" / (name + ".pem");
}

util::Expected<std::vector<verify::TrustedKey>> resolve_trusted_keys(const KeyOptions& options) {
  if (!options.files.empty()) {
    return load_files(options.files, "trusted_keys");
  }
  if (auto files = trusted_key_files_from_environment(); !files.empty()) {
    return load_files(files, k_variable);
  }
  if (!options.hub) {
    return std::vector<verify::TrustedKey>{};
  }
  const HubKeySource& source = *options.hub;
  const fs::path cached = trusted_keys_cache_file(source.cache_dir, source.endpoint.url);
  const std::string origin = fmt::format("trusted keys of {}", source.endpoint.url);
  std::string failure;
  if (!source.endpoint.offline) {
    hub::ClientOptions client_options;
    client_options.progress_bar = false;
    const hub::HubClient client(source.endpoint, client_options, source.transport);
    auto fetched = client.trusted_keys();
    if (fetched) {
      std::string text;
      for (const std::string& pem : *fetched) {
        text += pem;
        if (!pem.empty() && pem.back() != '\n') {
          text += '\n';
        }
      }
      auto keys = parse_cached(text, origin);
      if (!keys) {
        return keys;  // a hub that serves garbage is not silently replaced by the cache
      }
      std::error_code ec;
      fs::create_directories(cached.parent_path(), ec);
      // A cache that cannot be written only costs offline loads their keys; the load goes on.
      (void)util::write_file_atomic(cached, text);
      return keys;
    }
    if (fetched.error().status == 404) {
      return std::vector<verify::TrustedKey>{};  // not a kernelhub serve: it publishes no keys
    }
    failure = fetched.error().message;
  }
  std::error_code ec;
  if (fs::is_regular_file(cached, ec)) {
    return parse_cached(KH_TRY(util::read_file(cached)), origin + " (cached)");
  }
  if (failure.empty()) {
    return util::fail(fmt::format("{}: offline and none cached (load once online, or set {})",
                                  origin, k_variable));
  }
  return util::fail(fmt::format("{}: {}", origin, failure));
}

}  // namespace kernelhub::loader
