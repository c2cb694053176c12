// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <kernelhub/util/expected.hpp>

namespace kernelhub::server {

// What one organization's overview reports (`GET /api/organizations/{org}/overview`).
struct OrganizationSettings {
  bool trusted_kernel_publisher = false;
};

// The server's configuration: the tokens that may write and the per-organization settings
// read from `<root>/config.toml`:
//
//   [organizations.kernels-community]
//   trustedKernelPublisher = true
struct ServerSettings {
  std::filesystem::path root;
  // Empty: no token file was given, so the server is read-only.
  std::set<std::string> tokens;
  std::map<std::string, OrganizationSettings> organizations;
  // Request bodies above this get 413 before they are read.
  std::size_t max_body_bytes = std::size_t{2} << 30;
  std::size_t threads = 32;
};

// One token a line; blank lines and lines starting with `#` are skipped.
util::Expected<std::set<std::string>> read_token_file(const std::filesystem::path& path);

// `<root>/config.toml`, when it exists; no file means no organization settings.
util::Expected<std::map<std::string, OrganizationSettings>> read_organization_settings(
    const std::filesystem::path& root);

}  // namespace kernelhub::server
