// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/trusted_keys.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include <kernelhub/hub/hub_client.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::loader {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_trusted_keys_variable = "KERNELHUB_TRUSTED_KEYS";

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

// Refuses `path` unless this user owns it and nobody else may write it: a kept key list that
// another user can change decides nothing.
util::Expected<void> check_private(const fs::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return util::fail(fmt::format("cannot stat \"{}\": {}", path.string(), std::strerror(errno)));
  }
  if (info.st_uid != ::geteuid()) {
    return util::fail(fmt::format("\"{}\" belongs to another user (uid {}), so it is not trusted",
                                  path.string(), info.st_uid));
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return util::fail(fmt::format(
        "\"{}\" may be written by others (mode {:04o}), so it is not trusted; "
        "chmod go-w it, or remove it and load once online",
        path.string(), info.st_mode & 07777));
  }
  return {};
}

// Keeps the hub's answer, readable and writable by this user only.
void keep_answer(const fs::path& file, const std::string& text) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  fs::permissions(file.parent_path(), fs::perms::owner_all, fs::perm_options::replace, ec);
  // A file that cannot be written only costs offline loads their keys; the load goes on.
  if (util::write_file_atomic(file, text)) {
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::replace, ec);
  }
}

// The kept list is the PEM blocks one after another; an empty file records a hub that
// publishes no key, which is an answer too.
util::Expected<std::vector<verify::TrustedKey>> parse_kept(const std::string& text,
                                                             const std::string& source) {
  if (text.find_first_not_of(" \n") == std::string::npos) {
    return std::vector<verify::TrustedKey>{};
  }
  return verify::parse_trusted_keys(text, source);
}

}  // namespace

HubKeySource HubKeySource::from_environment() {
  return HubKeySource{hub::endpoint_from(hub::process_environment()),
                      hub_key_dir_from_environment(), nullptr};
}

fs::path hub_key_dir_from_environment() {
  if (const char* state = std::getenv("XDG_STATE_HOME");
      state != nullptr && fs::path(state).is_absolute()) {
    return fs::path(state) / "kernelhub" / "trusted-keys";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return fs::path(home) / ".local" / "state" / "kernelhub" / "trusted-keys";
  }
  return {};
}

std::vector<fs::path> trusted_key_files_from_environment() {
  std::vector<fs::path> files;
  const char* raw = std::getenv(k_trusted_keys_variable);
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

fs::path trusted_keys_file(const fs::path& key_dir, const std::string& endpoint_url) {
  // Named by the endpoint's hash: URLs hold characters no file name should.
  const std::string name = verify::hex_lower(verify::sha256(endpoint_url)).substr(0, 32);
  return key_dir / (name + ".pem");
}

util::Expected<std::vector<verify::TrustedKey>> resolve_trusted_keys(const KeyOptions& options) {
  if (!options.files.empty()) {
    return load_files(options.files, "trusted_keys");
  }
  if (auto files = trusted_key_files_from_environment(); !files.empty()) {
    return load_files(files, k_trusted_keys_variable);
  }
  if (!options.hub) {
    return std::vector<verify::TrustedKey>{};
  }
  const HubKeySource& source = *options.hub;
  const fs::path kept =
      source.key_dir.empty() ? fs::path() : trusted_keys_file(source.key_dir, source.endpoint.url);
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
      auto keys = parse_kept(text, origin);
      if (!keys) {
        return keys;  // a hub that serves garbage is not silently replaced by the kept list
      }
      if (!kept.empty()) {
        keep_answer(kept, text);
      }
      return keys;
    }
    if (fetched.error().status == 404) {
      return std::vector<verify::TrustedKey>{};  // not a kernelhub serve: it publishes no keys
    }
    failure = fetched.error().message;
  }
  std::error_code ec;
  if (!kept.empty() && fs::is_regular_file(kept, ec)) {
    if (auto mine = check_private(kept.parent_path()); !mine) {
      return util::fail(fmt::format("{}: {}", origin, mine.error().message));
    }
    if (auto mine = check_private(kept); !mine) {
      return util::fail(fmt::format("{}: {}", origin, mine.error().message));
    }
    return parse_kept(KH_TRY(util::read_file(kept)), origin + " (kept from the last online load)");
  }
  if (failure.empty()) {
    return util::fail(fmt::format(
        "{}: offline and none kept (load once online, so they are kept in {}, or set {})", origin,
        source.key_dir.empty() ? std::string("the state folder, which needs HOME or XDG_STATE_HOME")
                               : fmt::format("\"{}\"", source.key_dir.string()),
        k_trusted_keys_variable));
  }
  return util::fail(fmt::format("{}: {}", origin, failure));
}

}  // namespace kernelhub::loader
