// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include <kernelhub/util/expected.hpp>

namespace kernelhub::server {

// `[mirror]` of config.toml (docs/mirror.md): the hub this one pulls repositories through from.
//
//   [mirror]
//   upstream = "https://huggingface.co"
//   token-file = "upstream.token"   # relative to the root, or absolute; one token
//   refresh = 300                   # seconds between checks of a repository's branches and tags
//
// `kernelhub serve --mirror URL` sets the upstream without a config file (and wins over it).
struct MirrorSettings {
  // Empty: not a mirror.
  std::string upstream;
  std::filesystem::path token_file;
  // The token sent to the upstream (read from token_file), empty for none.
  std::string token;
  std::chrono::seconds refresh{300};

  bool enabled() const { return !upstream.empty(); }
};

// The one token of a mirror's token file (blank lines and `#` comments skipped): an error
// naming the file when it is missing or holds no token or several.
util::Expected<std::string> read_mirror_token(const std::filesystem::path& path);

// `url` checked (http or https, a host, no query) and without its trailing slashes.
util::Expected<std::string> normalize_upstream_url(std::string url);

}  // namespace kernelhub::server
