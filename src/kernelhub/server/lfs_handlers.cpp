// SPDX-License-Identifier: Apache-2.0
// Git LFS as huggingface.co serves it to huggingface_hub (lfs.py, _commit_api.py) and to git-lfs
// (docs/api/batch.md): the batch API, basic and multipart uploads to signed URLs, verify, and
// the signed download URL that stands in for the Hub's CDN. tests/data/hub/lfs-wire-forms.md lists
// each wire form with its source.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include <kernelhub/server/byte_range.hpp>
#include <kernelhub/server/cache_policy.hpp>
#include <kernelhub/server/handlers.hpp>
#include <kernelhub/server/lfs_object_store.hpp>
#include <kernelhub/server/repository_reader.hpp>
#include <kernelhub/server/upstream_mirror.hpp>
#include <kernelhub/util/unique_fd.hpp>

namespace kernelhub::server::handlers {

namespace {

using nlohmann::json;

// huggingface_hub may take a while between the batch answer and its last part (a 50 GB file
// at 10 MB/s is 80 minutes); a download URL is followed at once.
constexpr std::int64_t k_upload_url_seconds = 24 * 3600;
constexpr std::int64_t k_download_url_seconds = 3600;
// S3's limit, which huggingface_hub's multipart upload was made for.
constexpr std::uint64_t k_max_parts = 10000;
// A batch request names at most this many objects (huggingface_hub sends 256 at a time).
constexpr std::size_t k_max_batch_objects = 1000;
// The completion and verify bodies: an oid and a list of parts.
constexpr std::uint64_t k_max_small_body = std::uint64_t{2} << 20;

constexpr std::string_view k_lfs_media_type = "application/vnd.git-lfs+json";

HttpResponse lfs_json(int status, const json& body) {
  HttpResponse response = json_response(status, body);
  response.content_type = std::string(k_lfs_media_type);
  return response;
}

// The folder of the repository's objects relative to the root: what a grant names.
std::string store_key(const RepoId& id) {
  return fmt::format("{}/{}", api_part(id.type), id.id());
}

std::string objects_url(const Context& ctx, const RepoId& id) {
  return fmt::format("{}/{}{}.git/info/lfs/objects", ctx.request.base_url, url_prefix(id.type),
                     id.id());
}

HubExpected<const UrlSigner*> signer_of(const Context& ctx) {
  if (ctx.signer == nullptr) {
    return hub_fail(403, "", "this server hands out no signed URLs");
  }
  return ctx.signer;
}

std::string signed_url(const Context& ctx, std::string base, const LfsGrant& grant) {
  return fmt::format("{}?{}", base, grant_query(*ctx.signer, grant));
}

// The URL an object is downloaded from. A public repository's is not signed: anyone may read
// the object anyway, and one URL per object (and commit) for every client, every replica and
// every restart is what lets a cache keep it for good (cache_policy.hpp). A private one's is
// signed and expires (lfs_grant.hpp), and its answers are `private`, so no shared cache ever
// keeps them: the URL's signature is the only credential, and it is never handed to anyone else.
std::string download_url(const Context& ctx, const RepoId& id, Audience audience,
                         const std::string& oid, std::uint64_t size,
                         const std::string& commit = "") {
  const std::string base = fmt::format("{}/.kernelhub/lfs/{}/{}/{}", ctx.request.base_url,
                                       api_part(id.type), id.id(), oid);
  if (audience == Audience::everyone) {
    return commit.empty() ? base : fmt::format("{}?commit={}", base, commit);
  }
  const LfsGrant grant{LfsGrant::Action::download, store_key(id), oid, size, 0, 0,
                       unix_now() + k_download_url_seconds, commit};
  return signed_url(ctx, base, grant);
}

std::optional<std::uint64_t> part_number(std::string_view text) {
  std::uint64_t number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || number == 0 ||
      text.front() == '0') {
    return std::nullopt;
  }
  return number;
}

std::uint64_t part_count(std::uint64_t size, std::uint64_t chunk) {
  return chunk == 0 ? 0 : (size + chunk - 1) / chunk;
}

// What one request to an object URL is, once its path and method are read.
struct ObjectRequest {
  LfsGrant::Action action = LfsGrant::Action::upload;
  std::uint64_t part = 0;
};

HubExpected<ObjectRequest> object_request(const Context& ctx, std::span<const std::string> rest) {
  const std::string& method = ctx.request.method;
  if (rest.empty() && method == "PUT") {
    return ObjectRequest{LfsGrant::Action::upload, 0};
  }
  if (rest.size() == 1 && method == "PUT") {
    if (const auto number = part_number(rest[0])) {
      return ObjectRequest{LfsGrant::Action::upload_part, *number};
    }
  }
  if (rest.size() == 1 && rest[0] == "complete" && method == "POST") {
    return ObjectRequest{LfsGrant::Action::complete, 0};
  }
  if (rest.size() == 1 && rest[0] == "verify" && method == "POST") {
    return ObjectRequest{LfsGrant::Action::verify, 0};
  }
  return hub_fail(404, "", fmt::format("no LFS route for {} {}", method,
                                       ctx.request.target.substr(0, ctx.request.target.find('?'))));
}

HubExpected<LfsGrant> object_grant(const Context& ctx, const RepoId& id, const std::string& oid,
                                   const ObjectRequest& request) {
  if (!is_sha256_hex(oid)) {
    return bad_request(fmt::format("invalid LFS oid \"{}\": expected 64 lower-case hex digits",
                                   oid));
  }
  const UrlSigner* signer = KH_HUB_TRY(signer_of(ctx));
  return check_grant(*signer, request.action, store_key(id), oid, request.part, ctx.target,
                     unix_now());
}

// The size part `number` of a multipart upload must have: the chunk size, less for the last.
std::uint64_t expected_part_size(const LfsGrant& grant) {
  const std::uint64_t count = part_count(grant.size, grant.chunk_size);
  return grant.part < count ? grant.chunk_size : grant.size - grant.chunk_size * (count - 1);
}

HubExpected<std::string> spooled_body(const Context& ctx) {
  if (ctx.request.body_file.empty()) {
    return hub_fail(500, "", "the upload's body was not spooled to a file");
  }
  return ctx.request.body_file;
}

HubExpected<json> lfs_request_body(const Context& ctx) {
  json body = json::parse(ctx.request.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) {
    return hub_fail(422, "", "malformed LFS request: expected a JSON object");
  }
  return body;
}

// One entry of a batch answer: actions for a missing object, none for a stored one, or an
// error (git-lfs batch.md: per-object errors have a code and a message).
json batch_object(const Context& ctx, const RepoId& id, Audience audience, LfsObjectStore& store,
                  const json& object, bool upload, bool multipart) {
  const auto oid_it = object.find("oid");
  const auto size_it = object.find("size");
  const std::string oid = oid_it != object.end() && oid_it->is_string() ? oid_it->get<std::string>()
                                                                       : std::string();
  const bool size_ok = size_it != object.end() && size_it->is_number_unsigned();
  const std::uint64_t size = size_ok ? size_it->get<std::uint64_t>() : 0;
  json entry = {{"oid", oid}, {"size", size}};
  const auto fail = [&](int code, std::string message) {
    entry["error"] = {{"code", code}, {"message", std::move(message)}};
    return entry;
  };
  if (!is_sha256_hex(oid)) {
    return fail(422, "the oid must be a sha256: 64 lower-case hex digits");
  }
  if (!size_ok) {
    return fail(422, "the size must be a non-negative integer");
  }
  auto stored = store.stored_size(oid);
  if (!upload) {
    if (stored != size && ctx.mirror != nullptr) {
      if (auto fetched = ctx.mirror->fetch_lfs(ctx.settings.mirror, id, oid, size); !fetched) {
        return fail(fetched.error().status, fetched.error().message);
      }
      stored = store.stored_size(oid);
    }
    if (stored != size) {
      return fail(404, "object not found in this repository");
    }
    entry["authenticated"] = true;
    entry["actions"] = {{"download",
                         {{"href", download_url(ctx, id, audience, oid, size)},
                          {"expires_in", k_download_url_seconds}}}};
    return entry;
  }
  if (stored == size) {
    return entry;  // no actions: the client skips it
  }
  const std::uint64_t chunk = ctx.settings.storage.multipart_chunk_size;
  const bool in_parts = multipart && size > chunk;
  if (in_parts && part_count(size, chunk) > k_max_parts) {
    return fail(422, fmt::format("the object is larger than {} parts of {} bytes", k_max_parts,
                                 chunk));
  }
  if (!in_parts && size > ctx.settings.max_body_bytes) {
    return fail(413, fmt::format("the object is larger than the {} bytes one upload may carry "
                                 "here; ask for the multipart transfer",
                                 ctx.settings.max_body_bytes));
  }
  const std::int64_t expires = unix_now() + k_upload_url_seconds;
  const std::string base = fmt::format("{}/{}", objects_url(ctx, id), oid);
  const std::string key = store_key(id);
  json upload_action;
  if (in_parts) {
    json header = {{"chunk_size", std::to_string(chunk)}};
    const std::uint64_t count = part_count(size, chunk);
    for (std::uint64_t part = 1; part <= count; ++part) {
      header[std::to_string(part)] =
          signed_url(ctx, fmt::format("{}/{}", base, part),
                     {LfsGrant::Action::upload_part, key, oid, size, chunk, part, expires, {}});
    }
    upload_action = {{"href", signed_url(ctx, base + "/complete",
                                         {LfsGrant::Action::complete, key, oid, size, chunk, 0,
                                          expires, {}})},
                     {"header", std::move(header)},
                     {"expires_in", k_upload_url_seconds}};
  } else {
    upload_action = {
        {"href", signed_url(ctx, base, {LfsGrant::Action::upload, key, oid, size, 0, 0, expires, {}})},
        {"expires_in", k_upload_url_seconds}};
  }
  entry["authenticated"] = true;
  entry["actions"] = {
      {"upload", std::move(upload_action)},
      {"verify",
       {{"href", signed_url(ctx, base + "/verify",
                            {LfsGrant::Action::verify, key, oid, size, 0, 0, expires, {}})},
        {"expires_in", k_upload_url_seconds}}}};
  return entry;
}

}  // namespace

HubExpected<HttpResponse> lfs_batch(Context& ctx, const RepoId& id) {
  const json body = KH_HUB_TRY(lfs_request_body(ctx));
  const std::string operation =
      body.contains("operation") && body["operation"].is_string() ? body["operation"].get<std::string>() : "";
  if (operation != "upload" && operation != "download") {
    return hub_fail(422, "", "malformed LFS batch request: \"operation\" must be \"upload\" or "
                             "\"download\"");
  }
  const bool upload = operation == "upload";
  if (upload) {
    KH_HUB_TRY(require_write_token(ctx));
  }
  // The same privacy as any read: a private repository is a missing one without a token.
  const Audience audience =
      KH_HUB_TRY(open_for_read(ctx, id)).is_private ? Audience::token_holder : Audience::everyone;
  if (const auto algo = body.find("hash_algo");
      algo != body.end() && (!algo->is_string() || algo->get<std::string>() != "sha256")) {
    return hub_fail(409, "", "unsupported hash algorithm: this server stores sha256 objects");
  }
  const auto objects = body.find("objects");
  if (objects == body.end() || !objects->is_array()) {
    return hub_fail(422, "", "malformed LFS batch request: \"objects\" must be a list");
  }
  if (objects->size() > k_max_batch_objects) {
    return hub_fail(422, "", fmt::format("too many objects in one batch: {}, at most {}",
                                         objects->size(), k_max_batch_objects));
  }
  // `basic` is every client's; `multipart` is huggingface_hub's, taken when it is offered.
  bool multipart = false;
  bool basic = !body.contains("transfers");
  if (const auto transfers = body.find("transfers"); transfers != body.end()) {
    if (!transfers->is_array()) {
      return hub_fail(422, "", "malformed LFS batch request: \"transfers\" must be a list");
    }
    for (const auto& transfer : *transfers) {
      multipart = multipart || transfer == "multipart";
      basic = basic || transfer == "basic";
    }
  }
  multipart = multipart && upload;
  if (!basic && !multipart) {
    return hub_fail(422, "", "no transfer this server speaks was offered: it speaks basic and, "
                             "for uploads, multipart (not xet)");
  }
  LfsObjectStore store(ctx.store.directory(id));
  json answers = json::array();
  for (const auto& object : *objects) {
    if (!object.is_object()) {
      return hub_fail(422, "", "malformed LFS batch request: each object must be "
                               "{\"oid\", \"size\"}");
    }
    answers.push_back(batch_object(ctx, id, audience, store, object, upload, multipart));
  }
  return lfs_json(200, {{"transfer", multipart ? "multipart" : "basic"},
                        {"objects", std::move(answers)},
                        {"hash_algo", "sha256"}});
}

HubExpected<LfsBodyPlan> lfs_admit(Context& ctx, const RepoId& id, const std::string& oid,
                                   std::span<const std::string> rest) {
  const ObjectRequest request = KH_HUB_TRY(object_request(ctx, rest));
  const LfsGrant grant = KH_HUB_TRY(object_grant(ctx, id, oid, request));
  switch (request.action) {
    case LfsGrant::Action::upload:
      return LfsBodyPlan{true, grant.size};
    case LfsGrant::Action::upload_part:
      if (grant.part > part_count(grant.size, grant.chunk_size)) {
        return bad_request(fmt::format("part {} is past the last part of this upload",
                                       grant.part));
      }
      return LfsBodyPlan{true, expected_part_size(grant)};
    default:
      return LfsBodyPlan{false, k_max_small_body};
  }
}

HubExpected<HttpResponse> lfs_object(Context& ctx, const RepoId& id, const std::string& oid,
                                     std::span<const std::string> rest) {
  const ObjectRequest request = KH_HUB_TRY(object_request(ctx, rest));
  const LfsGrant grant = KH_HUB_TRY(object_grant(ctx, id, oid, request));
  KH_HUB_TRY(ctx.store.open(id));
  LfsObjectStore store(ctx.store.directory(id));
  const LfsPointer expected{oid, grant.size};
  switch (request.action) {
    case LfsGrant::Action::upload: {
      KH_HUB_TRY(store.install(KH_HUB_TRY(spooled_body(ctx)), expected));
      return lfs_json(200, json::object());
    }
    case LfsGrant::Action::upload_part: {
      if (grant.part > part_count(grant.size, grant.chunk_size)) {
        return bad_request(fmt::format("part {} is past the last part of this upload",
                                       grant.part));
      }
      const std::string etag = KH_HUB_TRY(store.store_part(KH_HUB_TRY(spooled_body(ctx)), oid,
                                                           grant.part, expected_part_size(grant)));
      HttpResponse response = lfs_json(200, json::object());
      response.set_header("ETag", etag);
      return response;
    }
    case LfsGrant::Action::complete: {
      const json body = KH_HUB_TRY(lfs_request_body(ctx));
      const auto parts = body.find("parts");
      if (body.value("oid", json()) != oid || parts == body.end() || !parts->is_array()) {
        return hub_fail(422, "", "malformed multipart completion: expected {\"oid\": <this "
                                 "object>, \"parts\": [{\"partNumber\", \"etag\"}]}");
      }
      std::vector<LfsObjectStore::Part> listed;
      for (const auto& part : *parts) {
        if (!part.is_object() || !part.value("partNumber", json()).is_number_unsigned() ||
            !part.value("etag", json()).is_string()) {
          return hub_fail(422, "", "malformed multipart completion: each part needs "
                                   "\"partNumber\" and \"etag\"");
        }
        listed.push_back({part["partNumber"].get<std::uint64_t>(), part["etag"].get<std::string>()});
      }
      KH_HUB_TRY(store.complete(expected, grant.chunk_size, listed));
      return lfs_json(200, json::object());
    }
    case LfsGrant::Action::verify: {
      const json body = KH_HUB_TRY(lfs_request_body(ctx));
      if (body.value("oid", json()) != oid || !body.value("size", json()).is_number_unsigned()) {
        return hub_fail(422, "", "malformed verify request: expected {\"oid\", \"size\"}");
      }
      const std::uint64_t size = body["size"].get<std::uint64_t>();
      if (store.stored_size(oid) != size) {
        return hub_fail(404, "", fmt::format("LFS object {} of {} bytes is not stored", oid, size));
      }
      return lfs_json(200, json::object());
    }
    case LfsGrant::Action::download:
      break;
  }
  return hub_fail(404, "", "no such LFS route");
}

HubExpected<HttpResponse> lfs_download(Context& ctx, const RepoId& id, const std::string& oid) {
  if (!is_sha256_hex(oid)) {
    return hub_fail(404, "", "no such LFS object");
  }
  const auto repo = ctx.store.open(id);
  const Audience audience =
      repo && !repo->is_private ? Audience::everyone : Audience::token_holder;
  LfsGrant grant;
  if (audience == Audience::token_holder) {
    // A missing repository is refused as a private one is, so the answer tells nobody which
    // private repositories exist.
    const UrlSigner* signer = KH_HUB_TRY(signer_of(ctx));
    grant = KH_HUB_TRY(check_grant(*signer, LfsGrant::Action::download, store_key(id), oid, 0,
                                   ctx.target, unix_now()));
    if (!repo) {
      return tl::unexpected(repo.error());
    }
  } else {
    // Unsigned (download_url): only the commit a resolve redirected from, sent back as
    // X-Repo-Commit, so it must be one of this repository's.
    grant.commit = std::string(ctx.target.param("commit").value_or(""));
    if (!grant.commit.empty() &&
        (grant.commit.find_first_not_of("0123456789abcdef") != std::string::npos ||
         resolve_revision(repo->git.get(), grant.commit) != grant.commit)) {
      return hub_fail(404, "", fmt::format("this URL's commit \"{}\" is not one of {}",
                                           grant.commit.substr(0, 64), id.id()));
    }
  }
  LfsObjectStore store(ctx.store.directory(id));
  // Shared by the response's reader until the last byte is sent.
  auto file = std::make_shared<util::UniqueFd>(
      ::open(store.object_path(oid).c_str(), O_RDONLY | O_CLOEXEC));
  const auto size = store.stored_size(oid);
  if (!*file || !size || (audience == Audience::token_holder && size != grant.size)) {
    return hub_fail(404, "", fmt::format("LFS object {} is not stored here", oid));
  }
  HttpResponse response;
  response.content_type = "application/octet-stream";
  // An object named by its sha256 never changes.
  mark_cacheable(response, oid, audience, Lifetime::immutable, ctx.settings.http.branch_max_age);
  response.set_header("Accept-Ranges", "bytes");
  // What the resolve's redirect carried, again: huggingface_hub 2.4.0 follows a redirect that
  // stays on the same origin and reads the file's metadata from where it ends.
  response.set_header("X-Linked-Etag", fmt::format("\"{}\"", oid));
  response.set_header("X-Linked-Size", std::to_string(*size));
  if (!grant.commit.empty()) {
    response.set_header("X-Repo-Commit", grant.commit);
  }
  response.has_stream = true;
  // A client that holds the object gets a 304 (made by the router) and no bytes.
  const auto if_none_match = ctx.request.header("if-none-match");
  if (ctx.request.method == "HEAD" ||
      (if_none_match && none_match(*if_none_match, fmt::format("\"{}\"", oid)))) {
    response.stream_size = *size;
    return response;
  }
  const RangeDecision range =
      decide_range(effective_range(ctx.request, fmt::format("\"{}\"", oid)), *size);
  if (range.outcome == RangeOutcome::unsatisfiable) {
    HttpResponse refused = error_response(
        HubError{416, "", fmt::format("range not satisfiable for a {}-byte file", *size)});
    refused.set_header("Content-Range", fmt::format("bytes */{}", *size));
    return refused;
  }
  if (range.outcome == RangeOutcome::partial) {
    response.status = 206;
    response.set_header("Content-Range", fmt::format("bytes {}-{}/{}", range.offset,
                                                     range.offset + range.length - 1, *size));
  }
  ::posix_fadvise(file->get(), static_cast<off_t>(range.offset), static_cast<off_t>(range.length),
                  POSIX_FADV_SEQUENTIAL);
  response.stream_size = range.length;
  response.stream_owner = file;
  response.stream_fd = file->get();
  response.stream_offset = range.offset;
  response.stream_reader = [file, at = range.offset, left = range.length](
                               char* out, std::size_t capacity) mutable -> HubExpected<std::size_t> {
    const auto wanted = static_cast<std::size_t>(std::min<std::uint64_t>(capacity, left));
    while (true) {
      const ssize_t n = ::pread(file->get(), out, wanted, static_cast<off_t>(at));
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n < 0) {
        return hub_fail(500, "", fmt::format("cannot read an LFS object: {}", std::strerror(errno)));
      }
      at += static_cast<std::uint64_t>(n);
      left -= static_cast<std::uint64_t>(n);
      return static_cast<std::size_t>(n);
    }
  };
  return response;
}

HubExpected<HttpResponse> lfs_redirect(Context& ctx, const RepoId& id, const std::string& commit,
                                       const LfsPointer& pointer, Audience audience,
                                       Lifetime lifetime) {
  KH_HUB_TRY(signer_of(ctx));
  LfsObjectStore store(ctx.store.directory(id));
  if (store.stored_size(pointer.oid) != pointer.size && ctx.mirror != nullptr) {
    KH_HUB_TRY(ctx.mirror->fetch_lfs(ctx.settings.mirror, id, pointer.oid, pointer.size));
  }
  if (store.stored_size(pointer.oid) != pointer.size) {
    HttpResponse missing = error_response(HubError{
        404, "", fmt::format("the LFS object {} this file points at is not stored on this hub",
                             pointer.oid)});
    missing.set_header("X-Repo-Commit", commit);
    return missing;
  }
  HttpResponse response;
  response.status = 302;
  response.content_type = "text/plain";
  response.set_header("Location",
                      download_url(ctx, id, audience, pointer.oid, pointer.size, commit));
  response.set_header("X-Linked-Etag", fmt::format("\"{}\"", pointer.oid));
  response.set_header("X-Linked-Size", std::to_string(pointer.size));
  response.set_header("X-Repo-Commit", commit);
  response.set_header("Accept-Ranges", "bytes");
  // A public object's Location never expires, so the redirect lives as long as the revision
  // does; a private one's is signed for an hour and must not outlive that in any cache.
  if (audience == Audience::everyone) {
    mark_cacheable(response, "", audience, lifetime, ctx.settings.http.branch_max_age);
  } else {
    mark_uncacheable(response);
  }
  return response;
}

UploadVerdict upload_verdict(const Context& ctx, git_repository* repo, const std::string& commit,
                             const std::string& path, std::uint64_t size,
                             std::string_view sample) {
  const StorageSettings& storage = ctx.settings.storage;
  if (!storage.lfs_threshold || size == 0) {
    return {};
  }
  return decide_upload_mode(storage, size, sample, tracked_by_lfs(repo, commit, path));
}

HubExpected<HttpResponse> xet_not_served(Context& ctx) {
  (void)ctx;
  return hub_fail(501, "", "this hub does not speak Xet: it stores large and binary files "
                           "with Git LFS. huggingface_hub uses LFS when HF_HUB_DISABLE_XET=1 "
                           "is set (or hf_xet is not installed)");
}

}  // namespace kernelhub::server::handlers
