// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <kernelhub/server/hub_error.hpp>
#include <kernelhub/server/request_target.hpp>

namespace kernelhub::server {

// Signs the URLs the LFS batch API hands out. huggingface_hub sends no token with an upload
// PUT, a part PUT or a multipart completion (they go to S3 and to a signed Hub endpoint on
// huggingface.co), and a resolve's 302 leads to a CDN URL that works without one: so each of
// those URLs carries what it allows, when that ends, and an HMAC-SHA256 of both under a key
// only this server process holds (a restart voids the URLs it gave, as an expiry would).
// Download URLs are signed for private repositories only: a public object's URL is plain and
// stable, so caches keep one copy of it (lfs_handlers.cpp, cache_policy.hpp).
class UrlSigner {
 public:
  UrlSigner();                          // a random key
  explicit UrlSigner(std::string key);  // a fixed one, for tests
  std::string sign(std::string_view message) const;  // 64 hex digits
  bool verify(std::string_view message, std::string_view signature) const;

 private:
  std::string m_key;
};

// What one signed URL allows: `action` on object `oid` of `repo` (its store folder relative to
// the root), with the object's size and, for multipart, the chunk size and part number.
struct LfsGrant {
  enum class Action { upload, upload_part, complete, verify, download };
  Action action = Action::download;
  std::string repo;
  std::string oid;
  std::uint64_t size = 0;
  std::uint64_t chunk_size = 0;
  std::uint64_t part = 0;
  std::int64_t expires = 0;  // seconds since the epoch
  // download: the commit a resolve redirected from (empty from the batch API), so the
  // download's answer can carry X-Repo-Commit (a client may follow a same-origin redirect
  // and read the file's metadata from the download URL's answer).
  std::string commit;
};

// `size=..&chunk=..&commit=..&expires=..&signature=..` (the parts the action uses).
std::string grant_query(const UrlSigner& signer, const LfsGrant& grant);

// The grant a request's query carries for `action` on `repo`/`oid`: 403 when the signature
// does not match or the URL expired at `now` (the message says which).
HubExpected<LfsGrant> check_grant(const UrlSigner& signer, LfsGrant::Action action,
                                  const std::string& repo, const std::string& oid,
                                  std::uint64_t part, const RequestTarget& target,
                                  std::int64_t now);

std::int64_t unix_now();

}  // namespace kernelhub::server
