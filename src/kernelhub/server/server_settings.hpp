// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <kernelhub/server/mirror_settings.hpp>
#include <kernelhub/util/expected.hpp>

namespace kernelhub::server {

// What one organization's overview reports (`GET /api/organizations/{org}/overview`).
struct OrganizationSettings {
  bool trusted_kernel_publisher = false;
};

// A public key the organisation signs kernels with (`kernel-builder sign`), published at
// `GET /api/kernelhub/trusted-keys` so loaders can check keyed signatures against it.
struct PublishedKey {
  std::string hint;       // base64 SHA-256 of the DER SubjectPublicKeyInfo, as bundles name it
  std::string algorithm;  // "ECDSA P-256", "Ed25519", "RSA 3072"
  std::string pem;
  std::string source;     // the config entry it came from: a path, or "inline"
};

// The server's configuration: the tokens that may write, the per-organization settings and the
// trusted signing keys read from `<root>/config.toml` (read again while serving, see
// HubRouter::reload):
//
//   [organizations.kernels-community]
//   trustedKernelPublisher = true
//
//   [signing]
//   # PEM files (relative to the root, or absolute; a file may hold several keys) or inline PEM
//   trusted-keys = ["keys/team.pub", """-----BEGIN PUBLIC KEY-----..."""]
// What one client may hold of the server (issue 12): every wait is bounded, so idle or slow
// clients cost a socket and a few KiB each, never a thread, and cannot keep others out.
struct ServerLimits {
  // The request line and headers must arrive within this of the first byte of the request
  // (of the connection, for its first request), and fit in `max_head_bytes`.
  std::chrono::seconds head_timeout{10};
  std::size_t max_head_bytes = std::size_t{64} << 10;
  // A kept-alive connection is closed after this long without a new request.
  std::chrono::seconds idle_timeout{30};
  // A request body or an answer must move within `transfer_timeout` plus its size at
  // `min_rate_bytes` per second: a 2 GiB commit at 64 KiB/s gets 9 hours, one byte a second
  // of a small body does not.
  std::chrono::seconds transfer_timeout{30};
  std::uint64_t min_rate_bytes = std::uint64_t{64} << 10;
  // Connections held at once: in all, and from one IP address.
  std::size_t max_connections = 10000;
  std::size_t max_connections_per_peer = 256;
};

// `[storage]` of config.toml: which files a commit may carry inline and which must come through
// Git LFS, as huggingface.co decides (tests/data/hub/lfs-wire-forms.md has the sources):
//
//   [storage]
//   lfs-threshold = 10485760      # bytes; larger files go through LFS (false: no LFS at all)
//   binary-lfs-threshold = 0      # bytes; larger binary files go through LFS
//   multipart-chunk-size = 67108864
struct StorageSettings {
  // nullopt: every file is regular (the lenient hub this server was before LFS).
  std::optional<std::uint64_t> lfs_threshold = std::uint64_t{10} << 20;
  std::uint64_t binary_lfs_threshold = 0;
  // LFS objects larger than this are uploaded in parts of this size (when the client asks
  // for the multipart transfer, as huggingface_hub does).
  std::uint64_t multipart_chunk_size = std::uint64_t{64} << 20;
};

// `[http]` of config.toml: how long a cache may keep an answer asked for by branch or tag name
// before it asks again (cache_policy.hpp; answers by commit id are immutable):
//
//   [http]
//   branch-max-age = 5   # seconds; 0: every use is revalidated (no-cache)
struct HttpCacheSettings {
  std::chrono::seconds branch_max_age{5};
};

struct ServerSettings {
  std::filesystem::path root;
  // Empty: no token file was given, so the server is read-only.
  std::filesystem::path token_file;
  std::set<std::string> tokens;
  std::map<std::string, OrganizationSettings> organizations;
  std::vector<PublishedKey> trusted_keys;
  StorageSettings storage;
  HttpCacheSettings http;
  // Request bodies above this get 413 before they are read.
  std::size_t max_body_bytes = std::size_t{2} << 30;
  std::size_t threads = 32;
  ServerLimits limits;
  // How long a browser's sign-in (`/login`) lasts; sessions also end when the server stops.
  std::chrono::seconds session_lifetime{std::chrono::hours(12)};
  // `[mirror]` of config.toml, with `mirror_upstream_override` (`serve --mirror`) in force.
  MirrorSettings mirror;
  std::string mirror_upstream_override;
};

// One token a line; blank lines and lines starting with `#` are skipped. A missing file, an
// empty one or one of comments only gives no token: nobody may write (issue 20 item 4: emptying
// or deleting the file is how every token is revoked). An error only for a file that exists
// and cannot be read, or a line that is no token (a blank or a control character inside).
util::Expected<std::set<std::string>> read_token_file(const std::filesystem::path& path);

// What tells one version of a settings file from the next without reading it: any change
// (or the file appearing or going away) means it must be read again.
struct FileStamp {
  bool exists = false;
  std::int64_t mtime_ns = 0;
  std::uintmax_t size = 0;
  std::uintmax_t inode = 0;

  bool operator==(const FileStamp&) const = default;
};
FileStamp file_stamp(const std::filesystem::path& path);

// `<root>/config.toml`, when it exists; no file means no organization settings and no keys.
struct ConfigFile {
  std::map<std::string, OrganizationSettings> organizations;
  std::vector<PublishedKey> trusted_keys;
  StorageSettings storage;
  HttpCacheSettings http;
  MirrorSettings mirror;
};
util::Expected<ConfigFile> read_config_file(const std::filesystem::path& root);

// `base` with its organizations and keys read again from `<root>/config.toml`; an error, and
// `base` left alone, when it fails. The token file is read on its own (read_token_file), so
// a broken config.toml never keeps a revoked token valid.
util::Expected<ServerSettings> reread_settings(const ServerSettings& base);

}  // namespace kernelhub::server
