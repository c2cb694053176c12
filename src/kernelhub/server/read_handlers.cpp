// SPDX-License-Identifier: Apache-2.0
// The read endpoints of hub-api.md §2: repo info, refs, tree, resolve, organization overview;
// and kernelhub's own: the trusted keys and the hub's checks of a revision's variants.
#include <algorithm>
#include <charconv>
#include <ctime>

#include <fmt/format.h>

#include <kernelhub/server/byte_range.hpp>
#include <kernelhub/server/cache_policy.hpp>
#include <kernelhub/server/handlers.hpp>
#include <kernelhub/server/hub_timestamp.hpp>
#include <kernelhub/server/repository_blob_reader.hpp>
#include <kernelhub/server/repository_reader.hpp>
#include <kernelhub/server/web/variant_matrix.hpp>

namespace kernelhub::server::handlers {

namespace {

using nlohmann::json;

// Files above this are sent as they are inflated (when stored loose), not read whole first.
constexpr std::uint64_t k_stream_blob_bytes = std::uint64_t{8} << 20;

// The Hub pages tree listings at 1000 entries, 50 with expand=true.
constexpr std::size_t k_tree_page = 1000;
constexpr std::size_t k_tree_page_expanded = 50;

json ref_list(const std::vector<RefEntry>& refs) {
  json list = json::array();
  for (const auto& ref : refs) {
    list.push_back({{"name", ref.name}, {"ref", ref.ref}, {"targetCommit", ref.target_commit}});
  }
  return list;
}

Audience audience_of(const OpenRepository& repo) {
  return repo.is_private ? Audience::token_holder : Audience::everyone;
}

// An answer about commit `sha` the client already holds (If-None-Match names it): the empty
// 200 the router turns into a 304, made without reading the tree again.
std::optional<HttpResponse> held_by_client(const Context& ctx, const OpenRepository& repo,
                                           const std::string& revision, const std::string& sha) {
  const auto field = ctx.request.header("if-none-match");
  if (!field || !none_match(*field, fmt::format("\"{}\"", sha))) {
    return std::nullopt;
  }
  HttpResponse response;
  mark_cacheable(response, sha, audience_of(repo), lifetime_of(revision, sha),
                 ctx.settings.http.branch_max_age);
  return response;
}

}  // namespace

bool has_valid_token(const Context& ctx) {
  const auto header = ctx.request.header("authorization");
  constexpr std::string_view k_bearer = "Bearer ";
  constexpr std::string_view k_basic = "Basic ";
  if (header && header->starts_with(k_basic)) {
    // git and git-lfs send the token as the password of Basic auth (any user name), as they
    // do to huggingface.co.
    const auto decoded = decode_base64(header->substr(k_basic.size()));
    const std::size_t colon = decoded ? decoded->find(':') : std::string::npos;
    return colon != std::string::npos && ctx.settings.tokens.contains(decoded->substr(colon + 1));
  }
  if (!header || !header->starts_with(k_bearer)) {
    // Checked against the token file in force, so removing a token ends its sessions too.
    return ctx.session_token != nullptr && ctx.settings.tokens.contains(*ctx.session_token);
  }
  const std::string token(header->substr(k_bearer.size()));
  return ctx.settings.tokens.contains(token);
}

std::string repo_url(const Context& ctx, const RepoId& id) {
  return fmt::format("{}/{}{}", ctx.request.base_url, url_prefix(id.type), id.id());
}

HubExpected<OpenRepository> open_for_read(Context& ctx, const RepoId& id, RepoId* served) {
  auto opened = ctx.store.open(id);
  RepoId actual = id;
  if (!opened && id.type == RepoType::model) {
    actual.type = RepoType::kernel;
    opened = ctx.store.open(actual);
    if (!opened) {
      return repo_not_found(id.id());
    }
  }
  if (!opened) {
    return tl::unexpected(opened.error());
  }
  if (opened->is_private && !has_valid_token(ctx)) {
    // The same answer as a missing repository, as the Hub gives: a 401 would tell anyone
    // probing names which private repositories exist.
    return repo_not_found(id.id());
  }
  if (served != nullptr) {
    *served = actual;
  }
  return opened;
}

HubExpected<HttpResponse> repo_info(Context& ctx, const RepoId& id,
                                    const std::optional<std::string>& revision) {
  RepoId served;
  const OpenRepository repo = KH_HUB_TRY(open_for_read(ctx, id, &served));
  const std::string rev = revision.value_or("main");
  KH_HUB_TRY(check_revision(rev));
  const std::string sha = KH_HUB_TRY(resolve_revision(repo.git.get(), rev));
  if (auto held = held_by_client(ctx, repo, rev, sha)) {
    return std::move(*held);
  }
  const CommitSummary summary = KH_HUB_TRY(commit_summary(repo.git.get(), sha));
  const bool blobs = ctx.target.flag("blobs");
  const auto items = KH_HUB_TRY(list_tree(repo.git.get(), sha, "", Recursive::yes,
                                          blobs ? Sizes::read : Sizes::skip));
  json siblings = json::array();
  for (const auto& item : items) {
    if (item.is_directory) {
      continue;
    }
    json sibling = {{"rfilename", item.path}};
    if (blobs) {
      // An LFS file's size is its content's; the key is `sha256` here, `oid` in trees
      // (hub-api.md §2.1).
      sibling["size"] = item.lfs ? item.lfs->size : item.size;
      sibling["blobId"] = item.oid;
      if (item.lfs) {
        sibling["lfs"] = {{"size", item.lfs->size},
                          {"sha256", item.lfs->oid},
                          {"pointerSize", item.size}};
      }
    }
    siblings.push_back(std::move(sibling));
  }
  json body = {{"id", id.id()}};
  if (id.type == RepoType::model) {
    body["modelId"] = id.id();
  }
  body["author"] = id.ns;
  body["sha"] = sha;
  body["private"] = repo.is_private;
  body["disabled"] = false;
  body["gated"] = false;
  body["lastModified"] = hub_timestamp(summary.time);
  body["tags"] = json::array();
  body["downloads"] = 0;
  body["likes"] = 0;
  body["siblings"] = std::move(siblings);
  HttpResponse response = json_response(200, body);
  // The answer is a function of the commit: its id is the ETag.
  mark_cacheable(response, sha, audience_of(repo), lifetime_of(rev, sha),
                 ctx.settings.http.branch_max_age);
  return response;
}

HubExpected<HttpResponse> repo_refs(Context& ctx, const RepoId& id) {
  const OpenRepository repo = KH_HUB_TRY(open_for_read(ctx, id));
  const RepoRefs refs = KH_HUB_TRY(list_refs(repo.git.get()));
  json body = {{"branches", ref_list(refs.branches)},
               {"converts", json::array()},
               {"tags", ref_list(refs.tags)}};
  if (ctx.target.flag("include_prs")) {
    body["pullRequests"] = ref_list(refs.pull_requests);
  }
  return json_response(200, body);
}

HubExpected<HttpResponse> repo_tree(Context& ctx, const RepoId& id, const std::string& revision,
                                    const std::string& path) {
  const OpenRepository repo = KH_HUB_TRY(open_for_read(ctx, id));
  KH_HUB_TRY(check_revision(revision));
  if (!path.empty()) {
    KH_HUB_TRY(check_repo_path(path));
  }
  const std::string sha = KH_HUB_TRY(resolve_revision(repo.git.get(), revision));
  if (auto held = held_by_client(ctx, repo, revision, sha)) {
    return std::move(*held);
  }
  const bool recursive = ctx.target.flag("recursive");
  const bool expand = ctx.target.flag("expand");
  const auto items = KH_HUB_TRY(list_tree(repo.git.get(), sha, path,
                                          recursive ? Recursive::yes : Recursive::no,
                                          Sizes::read));
  std::size_t cursor = 0;
  if (const auto text = ctx.target.param("cursor")) {
    // Digits only: std::stoul took "-1" and wrapped it to the largest value (a 200 `[]`).
    const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), cursor);
    if (text->empty() || error != std::errc() || end != text->data() + text->size()) {
      return bad_request(fmt::format("invalid cursor \"{}\": expected a non-negative integer",
                                     *text));
    }
  }
  const std::size_t page = expand ? k_tree_page_expanded : k_tree_page;
  const std::size_t first = std::min(cursor, items.size());
  const std::vector<TreeItem> shown(items.begin() + static_cast<std::ptrdiff_t>(first),
                                    items.begin() + static_cast<std::ptrdiff_t>(
                                                        std::min(items.size(), cursor + page)));
  HttpResponse response = json_response(200, tree_entries(repo.git.get(), sha, shown, expand));
  // A page of a tree at one commit never changes (the URL names the path, the page and the
  // options): the commit id is its ETag.
  mark_cacheable(response, sha, audience_of(repo), lifetime_of(revision, sha),
                 ctx.settings.http.branch_max_age);
  if (cursor + page < items.size()) {
    // The client GETs the next page exactly as given, so it is absolute and complete.
    response.set_header(
        "Link", fmt::format("<{}{}?recursive={}&expand={}&cursor={}>; rel=\"next\"",
                            ctx.request.base_url, ctx.target.path, recursive, expand,
                            cursor + page));
  }
  return response;
}

HubExpected<HttpResponse> resolve_file(Context& ctx, const RepoId& id,
                                       const std::string& revision, const std::string& path) {
  const OpenRepository repo = KH_HUB_TRY(open_for_read(ctx, id));
  KH_HUB_TRY(check_revision(revision));
  KH_HUB_TRY(check_repo_path(path));
  const std::string sha = KH_HUB_TRY(resolve_revision(repo.git.get(), revision));
  // A client that holds the file gets a 304 (made by the router): its bytes are not read.
  const auto if_none_match = ctx.request.header("if-none-match");
  // Without a condition a GET reads a small file's bytes in the same walk to it as its id;
  // a large one comes as its header and is streamed below.
  const bool bytes_now = ctx.request.method != "HEAD" && !if_none_match;
  auto file = read_file(repo.git, sha, path, bytes_now ? Content::bytes : Content::header,
                        k_stream_blob_bytes);
  if (file && file->lfs) {
    return lfs_redirect(ctx, id, sha, *file->lfs, audience_of(repo), lifetime_of(revision, sha));
  }
  const std::string etag = file ? fmt::format("\"{}\"", file->oid) : std::string();
  const bool is_head =
      ctx.request.method == "HEAD" || (file && if_none_match && none_match(*if_none_match, etag));
  // A large blob is inflated while it is sent (loose or whole in a pack); a delta is read whole (libgit2
  // keeps it in memory until the last byte is out).
  std::shared_ptr<BlobReader> reader;
  if (file && !is_head && file->size > k_stream_blob_bytes) {
    reader = KH_HUB_TRY(open_streamed_blob(repo.git.get(), file->oid));
  }
  if (file && !is_head && !reader && file->data == nullptr) {
    file = read_file(repo.git, sha, path, Content::bytes);
  }
  if (!file) {
    // With the commit, the client records `.no_exist/<sha>/<path>` in its cache.
    HttpResponse response = error_response(file.error());
    response.set_header("X-Repo-Commit", sha);
    return response;
  }
  HttpResponse response;
  response.content_type = "application/octet-stream";
  mark_cacheable(response, file->oid, audience_of(repo), lifetime_of(revision, sha),
                 ctx.settings.http.branch_max_age);
  response.set_header("X-Repo-Commit", sha);
  response.set_header("Accept-Ranges", "bytes");
  response.has_stream = true;
  response.stream_owner = file->owner;
  if (is_head) {
    response.stream_size = file->size;
    return response;
  }
  const RangeDecision range = decide_range(effective_range(ctx.request, etag), file->size);
  if (range.outcome == RangeOutcome::unsatisfiable) {
    HttpResponse refused = error_response(
        HubError{416, "", fmt::format("range not satisfiable for a {}-byte file", file->size)});
    refused.set_header("Content-Range", fmt::format("bytes */{}", file->size));
    return refused;
  }
  if (range.outcome == RangeOutcome::partial) {
    response.status = 206;
    response.set_header("Content-Range", fmt::format("bytes {}-{}/{}", range.offset,
                                                     range.offset + range.length - 1,
                                                     file->size));
  }
  response.stream_size = range.length;
  if (reader) {
    // The range's start is reached by reading past the bytes before it, into the same buffer.
    response.stream_reader = [reader, skip = range.offset, left = range.length](
                                 char* out, std::size_t capacity) mutable -> HubExpected<std::size_t> {
      while (skip > 0) {
        const std::size_t n = KH_HUB_TRY(
            reader->read(out, static_cast<std::size_t>(std::min<std::uint64_t>(capacity, skip))));
        if (n == 0) {
          return 0;
        }
        skip -= n;
      }
      const std::size_t n = KH_HUB_TRY(
          reader->read(out, static_cast<std::size_t>(std::min<std::uint64_t>(capacity, left))));
      left -= n;
      return n;
    };
    return response;
  }
  response.stream_data = file->data + range.offset;
  return response;
}

HubExpected<HttpResponse> organization_overview(Context& ctx, const std::string& org) {
  if (!is_valid_id_part(org)) {
    return bad_request(fmt::format("invalid organization name \"{}\"", org));
  }
  const auto it = ctx.settings.organizations.find(org);
  bool known = it != ctx.settings.organizations.end();
  for (const RepoType type : {RepoType::model, RepoType::dataset, RepoType::kernel}) {
    std::error_code ec;
    known = known || std::filesystem::is_directory(
                         ctx.settings.root / std::string(api_part(type)) / org, ec);
  }
  if (!known) {
    return hub_fail(404, "", fmt::format("organization \"{}\" not found", org));
  }
  const bool trusted = it != ctx.settings.organizations.end() &&
                       it->second.trusted_kernel_publisher;
  return json_response(200, {{"name", org},
                             {"fullname", org},
                             {"type", "org"},
                             {"trustedKernelPublisher", trusted}});
}

HubExpected<HttpResponse> trusted_keys(Context& ctx) {
  nlohmann::json keys = nlohmann::json::array();
  for (const PublishedKey& key : ctx.settings.trusted_keys) {
    keys.push_back({{"hint", key.hint}, {"algorithm", key.algorithm}, {"pem", key.pem}});
  }
  return json_response(200, {{"keys", keys}});
}

HubExpected<HttpResponse> variant_checks(Context& ctx, const RepoId& id,
                                         const std::string& revision) {
  RepoId served = id;
  const OpenRepository repo = KH_HUB_TRY(open_for_read(ctx, id, &served));
  KH_HUB_TRY(check_revision(revision));
  const std::string sha = KH_HUB_TRY(resolve_revision(repo.git.get(), revision));
  auto variants = KH_HUB_TRY(web::collect_variants(repo.git, sha));
  const bool verifying =
      ctx.variant_checks != nullptr && ctx.variant_checks->pending(served, sha);
  // Only what is recorded: a read of the API never starts the hashing of a variant.
  web::check_variants(repo.git, sha, variants, ctx.settings.trusted_keys, verifying,
                      web::Fallback::none);
  const auto optional_bool = [](const std::optional<bool>& value) {
    return value ? json(*value) : json(nullptr);
  };
  json list = json::array();
  for (const web::VariantInfo& variant : variants) {
    using Checked = web::VariantInfo::Checked;
    const VariantIntegrity& integrity = variant.integrity;
    const bool recorded = variant.checked == Checked::at_upload ||
                          variant.checked == Checked::on_first_view;
    json entry = {
        {"name", variant.name},
        {"tree", variant.tree},
        {"state", recorded ? "recorded"
                  : variant.checked == Checked::verifying ? "verifying"
                                                           : "unchecked"},
    };
    if (recorded) {
      entry["checkedAt"] = variant.checked == Checked::at_upload ? "upload" : "page view";
      entry["checkedCommit"] = variant.checked_commit;
      entry["signatureCheckedAgain"] = variant.signature_rechecked;
      entry["digest"] = {{"matches", optional_bool(integrity.digest_matches)},
                         {"detail", integrity.digest_detail}};
      entry["signed"] = integrity.signed_;
      entry["signature"] = {{"valid", optional_bool(integrity.signature_valid)},
                            {"detail", integrity.signature_detail}};
    }
    list.push_back(std::move(entry));
  }
  return json_response(200, {{"commit", sha}, {"verifying", verifying}, {"variants", list}});
}

}  // namespace kernelhub::server::handlers
