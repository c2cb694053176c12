// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/mirror_settings.hpp>

#include <fmt/format.h>

#include <kernelhub/server/server_settings.hpp>

namespace kernelhub::server {

util::Expected<std::string> normalize_upstream_url(std::string url) {
  const bool http = url.starts_with("http://");
  if (!http && !url.starts_with("https://")) {
    return util::fail(fmt::format("mirror upstream \"{}\" must be an http:// or https:// URL",
                                  url));
  }
  const std::size_t host = http ? 7 : 8;
  while (url.size() > host && url.ends_with('/')) {
    url.pop_back();
  }
  if (url.size() == host || url[host] == '/' || url.find_first_of("?#", host) != std::string::npos ||
      url.find_first_of(" \t\r\n") != std::string::npos) {
    return util::fail(fmt::format("mirror upstream \"{}\" must be a base URL such as "
                                  "https://huggingface.co (a host, no query, no blanks)",
                                  url));
  }
  return url;
}

util::Expected<std::string> read_mirror_token(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return util::fail(fmt::format("mirror token file \"{}\" does not exist", path.string()));
  }
  const std::set<std::string> tokens = KH_TRY(read_token_file(path));
  if (tokens.size() != 1) {
    return util::fail(fmt::format("mirror token file \"{}\" must hold one token, not {}",
                                  path.string(), tokens.size()));
  }
  return *tokens.begin();
}

}  // namespace kernelhub::server
