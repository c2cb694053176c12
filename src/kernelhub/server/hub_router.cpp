// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/hub_router.hpp>

#include <algorithm>
#include <span>

#include <fmt/format.h>

#include <kernelhub/hub/http_transport.hpp>
#include <kernelhub/server/cache_policy.hpp>
#include <kernelhub/server/git_http.hpp>
#include <kernelhub/server/handlers.hpp>
#include <kernelhub/server/web/login_page.hpp>
#include <kernelhub/server/web/web_pages.hpp>

namespace kernelhub::server {

namespace {

using Segments = std::span<const std::string>;

// Reads carry no body the server uses; a client may still send a small one.
constexpr std::uint64_t k_max_read_body = std::uint64_t{64} << 10;
// create, preupload (a path and a 512-byte sample per file), branch, tag: JSON, never large.
constexpr std::uint64_t k_max_json_body = std::uint64_t{16} << 20;
// validate-yaml's body (a model card) is read without a token: 256 connections of one peer
// may then hold 64 MiB at most.
constexpr std::uint64_t k_max_card_body = std::uint64_t{256} << 10;
// The sign-in form: one token, url-encoded.
constexpr std::uint64_t k_max_login_body = std::uint64_t{4} << 10;
// paths-info is a read sent as a POST (up to 1000 paths as a form), so it needs no token.
constexpr std::uint64_t k_max_paths_body = std::uint64_t{1} << 20;

// /api/{type}/{ns}/{name}/paths-info/{rev}
bool is_paths_info(Segments segments) {
  return segments.size() >= 6 && segments[0] == "api" && segments[4] == "paths-info";
}

std::string join(Segments parts) {
  std::string out;
  for (const auto& part : parts) {
    out += (out.empty() ? "" : "/") + part;
  }
  return out;
}

tl::unexpected<HubError> no_route(const HttpRequest& request) {
  return hub_fail(404, "", fmt::format("no route for {} {}", request.method,
                                       request.target.substr(0, request.target.find('?'))));
}

tl::unexpected<HubError> wrong_method(const HttpRequest& request) {
  return hub_fail(405, "", fmt::format("method {} is not allowed here", request.method));
}

bool is_read(const HttpRequest& request) {
  return request.method == "GET" || request.method == "HEAD";
}

// `/login` and `/logout`: one segment, which no repository page has.
bool is_session_route(Segments segments) {
  return segments.size() == 1 && (segments[0] == "login" || segments[0] == "logout");
}

// /api/{models|datasets|kernels}/{ns}/{name}/...
HubExpected<HttpResponse> route_repo_api(handlers::Context& ctx, RepoType type,
                                         Segments rest) {
  const HttpRequest& request = ctx.request;
  if (rest.size() < 2) {
    return no_route(request);
  }
  const RepoId id = KH_HUB_TRY(make_repo_id(type, rest[0], rest[1]));
  rest = rest.subspan(2);
  if (rest.empty()) {
    return is_read(request) ? handlers::repo_info(ctx, id, std::nullopt) : wrong_method(request);
  }
  const std::string& action = rest[0];
  const Segments args = rest.subspan(1);
  // A revision is one segment with "%2F" for "/"; raw slashes are accepted too.
  const std::string joined = join(args);
  if (action == "revision" && !args.empty()) {
    return is_read(request) ? handlers::repo_info(ctx, id, joined) : wrong_method(request);
  }
  if (action == "refs" && args.empty()) {
    return is_read(request) ? handlers::repo_refs(ctx, id) : wrong_method(request);
  }
  if (action == "tree" && !args.empty()) {
    return is_read(request) ? handlers::repo_tree(ctx, id, args[0], join(args.subspan(1)))
                            : wrong_method(request);
  }
  if (action == "variant-checks" && !args.empty()) {
    return is_read(request) ? handlers::variant_checks(ctx, id, joined) : wrong_method(request);
  }
  if (action == "commits" && !args.empty()) {
    return is_read(request) ? handlers::repo_commits(ctx, id, joined) : wrong_method(request);
  }
  if (action == "discussions") {
    return handlers::discussions(ctx, id, args);
  }
  if (action == "paths-info" && !args.empty()) {
    return request.method == "POST" ? handlers::paths_info(ctx, id, joined)
                                    : wrong_method(request);
  }
  if (action == "preupload" && !args.empty()) {
    return request.method == "POST" ? handlers::preupload(ctx, id, joined)
                                    : wrong_method(request);
  }
  if (action == "commit" && !args.empty()) {
    return request.method == "POST" ? handlers::commit(ctx, id, joined) : wrong_method(request);
  }
  // hf_xet asks for a token here before it uploads or downloads through Xet.
  if ((action == "xet-write-token" || action == "xet-read-token") && !args.empty()) {
    return handlers::xet_not_served(ctx);
  }
  if (action == "branch" && !args.empty()) {
    return request.method == "POST" || request.method == "DELETE"
               ? handlers::branch(ctx, id, joined)
               : wrong_method(request);
  }
  if (action == "tag" && !args.empty()) {
    return request.method == "POST" || request.method == "DELETE" ? handlers::tag(ctx, id, joined)
                                                                  : wrong_method(request);
  }
  return no_route(request);
}

HubExpected<HttpResponse> route_api(handlers::Context& ctx, Segments rest) {
  const HttpRequest& request = ctx.request;
  if (rest.size() == 2 && rest[0] == "repos" && rest[1] == "create") {
    return request.method == "POST" ? handlers::create_repo(ctx) : wrong_method(request);
  }
  if (rest.size() == 1 && rest[0] == "validate-yaml") {
    return request.method == "POST" ? handlers::validate_yaml(ctx) : wrong_method(request);
  }
  if (rest.size() == 3 && rest[0] == "organizations" && rest[2] == "overview") {
    return is_read(request) ? handlers::organization_overview(ctx, rest[1])
                            : wrong_method(request);
  }
  if (rest.size() == 2 && rest[0] == "kernelhub" && rest[1] == "trusted-keys") {
    return is_read(request) ? handlers::trusted_keys(ctx) : wrong_method(request);
  }
  if (!rest.empty()) {
    if (const auto type = repo_type_from_api_part(rest[0])) {
      return route_repo_api(ctx, *type, rest.subspan(1));
    }
  }
  return no_route(request);
}

// The repository type a file URL's first segment names (and drops), as the Hub's URLs go.
RepoType take_type_prefix(Segments& segments) {
  if (!segments.empty() && (segments[0] == "kernels" || segments[0] == "datasets")) {
    const RepoType type = segments[0] == "kernels" ? RepoType::kernel : RepoType::dataset;
    segments = segments.subspan(1);
    return type;
  }
  return RepoType::model;
}

// `[kernels/|datasets/]{ns}/{name}.git/info/lfs/objects/...`: the Git LFS endpoint git-lfs
// derives from a clone URL and huggingface_hub builds (lfs.py). `rest` follows `objects`.
struct LfsRoute {
  RepoType type = RepoType::model;
  std::string ns;
  std::string name;
  Segments rest;
};

std::optional<LfsRoute> match_lfs_route(Segments segments) {
  const RepoType type = take_type_prefix(segments);
  if (segments.size() < 6 || !segments[1].ends_with(".git") || segments[2] != "info" ||
      segments[3] != "lfs" || segments[4] != "objects") {
    return std::nullopt;
  }
  return LfsRoute{type, segments[0], segments[1].substr(0, segments[1].size() - 4),
                  segments.subspan(5)};
}

// `[kernels/|datasets/]{ns}/{name}[.git]/info/refs` and `.../git-upload-pack`: git clones.
struct GitRoute {
  RepoType type = RepoType::model;
  std::string ns;
  std::string name;
  handlers::GitHttpAction action = handlers::GitHttpAction::advertise;
};

std::optional<GitRoute> match_git_route(Segments segments) {
  const RepoType type = take_type_prefix(segments);
  if (segments.size() < 3 || segments.size() > 4) {
    return std::nullopt;
  }
  std::string name = segments[1];
  if (name.ends_with(".git")) {
    name.resize(name.size() - 4);
  }
  if (segments.size() == 4 && segments[2] == "info" && segments[3] == "refs") {
    return GitRoute{type, segments[0], name, handlers::GitHttpAction::advertise};
  }
  if (segments.size() == 3 && segments[2] == "git-upload-pack") {
    return GitRoute{type, segments[0], name, handlers::GitHttpAction::upload_pack};
  }
  if (segments.size() == 3 && segments[2] == "git-receive-pack") {
    return GitRoute{type, segments[0], name, handlers::GitHttpAction::receive_pack};
  }
  return std::nullopt;
}

// `/.kernelhub/lfs/{models|datasets|kernels}/{ns}/{name}/{oid}`: the signed download URL (a
// leading `.` is never a namespace, so no repository's pages can be shadowed).
bool is_lfs_download(Segments segments) {
  return segments.size() == 6 && segments[0] == ".kernelhub" && segments[1] == "lfs";
}

HubExpected<HttpResponse> route_lfs(handlers::Context& ctx, const LfsRoute& route) {
  const HttpRequest& request = ctx.request;
  const RepoId id = KH_HUB_TRY(make_repo_id(route.type, route.ns, route.name));
  if (route.rest.size() == 1 && route.rest[0] == "batch") {
    return request.method == "POST" ? handlers::lfs_batch(ctx, id) : wrong_method(request);
  }
  return handlers::lfs_object(ctx, id, route.rest[0], route.rest.subspan(1));
}

// /[kernels/|datasets/]{ns}/{name}/resolve/{rev}/{path...}, and the web pages beside it
HubExpected<HttpResponse> route_file(handlers::Context& ctx, Segments segments) {
  const HttpRequest& request = ctx.request;
  // /models, /datasets, /kernels: the listing pages.
  if (segments.size() == 1) {
    if (const auto type = repo_type_from_api_part(segments[0])) {
      return is_read(request) ? web::listing_page(ctx, *type) : wrong_method(request);
    }
  }
  if (is_lfs_download(segments)) {
    const auto type = repo_type_from_api_part(segments[2]);
    if (!type) {
      return no_route(request);
    }
    const RepoId id = KH_HUB_TRY(make_repo_id(*type, segments[3], segments[4]));
    return is_read(request) ? handlers::lfs_download(ctx, id, segments[5]) : wrong_method(request);
  }
  if (const auto lfs = match_lfs_route(segments)) {
    return route_lfs(ctx, *lfs);
  }
  if (const auto git = match_git_route(segments)) {
    const bool get = git->action == handlers::GitHttpAction::advertise;
    if (get ? !is_read(request) : request.method != "POST") {
      return wrong_method(request);
    }
    const RepoId id = KH_HUB_TRY(make_repo_id(git->type, git->ns, git->name));
    return handlers::git_http(ctx, id, git->action);
  }
  const RepoType type = take_type_prefix(segments);
  if (segments.size() < 5 || segments[2] != "resolve") {
    // Anything else under a repository is a web page (web/web_pages.hpp).
    return web::route_page(ctx, type, segments);
  }
  if (!is_read(request)) {
    return wrong_method(request);
  }
  const RepoId id = KH_HUB_TRY(make_repo_id(type, segments[0], segments[1]));
  return handlers::resolve_file(ctx, id, segments[3], join(segments.subspan(4)));
}

std::optional<std::string> bearer_token(const HttpRequest& request) {
  const auto header = request.header("authorization");
  constexpr std::string_view k_bearer = "Bearer ";
  if (!header || !header->starts_with(k_bearer)) {
    return std::nullopt;
  }
  return std::string(header->substr(k_bearer.size()));
}

tl::unexpected<HubError> bearer_throttled() {
  return hub_fail(429, "", "too many requests with a wrong token from this address: its tokens "
                           "are not checked until a minute after the first of them");
}

}  // namespace

HubExpected<void> HubRouter::screen_bearer(const HttpRequest& head,
                                           const ServerSettings& settings) {
  const auto token = bearer_token(head);
  if (!token) {
    return {};
  }
  if (!m_bearer_throttle.allowed(head.peer)) {
    // Reads go on as anonymous ones (handle drops the header); writes need the token.
    return is_read(head) ? HubExpected<void>{} : bearer_throttled();
  }
  if (!settings.tokens.contains(*token)) {
    m_bearer_throttle.failed(head.peer);
  }
  return {};
}

HubExpected<HubRouter::BodyPlan> HubRouter::admit(const HttpRequest& head) {
  const std::shared_ptr<const ServerSettings> settings = this->settings();
  // Every request comes through here once, before its body: where wrong tokens are counted.
  KH_HUB_TRY(screen_bearer(head, *settings));
  const std::uint64_t max_body = settings->max_body_bytes;
  if (is_read(head) || head.method == "OPTIONS") {
    return BodyPlan{BodyPlan::Storage::memory, std::min(max_body, k_max_read_body)};
  }
  const RequestTarget target = KH_HUB_TRY(parse_request_target(head.target));
  const Segments segments(target.segments);
  // validate-yaml is the one write-method endpoint that needs no token (it changes nothing,
  // and ignores its body); the body of anyone may only be small.
  if (segments.size() == 2 && segments[0] == "api" && segments[1] == "validate-yaml") {
    return BodyPlan{BodyPlan::Storage::memory, std::min(max_body, k_max_card_body)};
  }
  if (is_paths_info(segments)) {
    return BodyPlan{BodyPlan::Storage::memory, std::min(max_body, k_max_paths_body)};
  }
  // Signing in is how a browser shows its token, so it cannot need one.
  if (is_session_route(segments)) {
    return BodyPlan{BodyPlan::Storage::memory, std::min(max_body, k_max_login_body)};
  }
  handlers::Context ctx{*settings, m_store, head, target};
  ctx.signer = &m_signer;
  // Git LFS: the batch request is small JSON whose operation decides what it needs (a download
  // of a public repository needs no token); an object URL carries its own signature, checked
  // before a byte of the object is read.
  if (segments.empty() || segments[0] != "api") {
    if (const auto lfs = match_lfs_route(segments)) {
      if (lfs->rest.size() == 1 && lfs->rest[0] == "batch") {
        return BodyPlan{BodyPlan::Storage::memory, std::min(max_body, k_max_paths_body)};
      }
      const RepoId id = KH_HUB_TRY(make_repo_id(lfs->type, lfs->ns, lfs->name));
      const handlers::LfsBodyPlan plan =
          KH_HUB_TRY(handlers::lfs_admit(ctx, id, lfs->rest[0], lfs->rest.subspan(1)));
      return BodyPlan{plan.to_file ? BodyPlan::Storage::file : BodyPlan::Storage::memory,
                      plan.limit};
    }
    // A fetch's negotiation is a read: a private repository's is checked by its handler.
    if (const auto git = match_git_route(segments);
        git && git->action == handlers::GitHttpAction::upload_pack) {
      return BodyPlan{BodyPlan::Storage::memory, std::min(max_body, k_max_json_body)};
    }
  }
  // Every other endpoint behind these methods writes, so the token is checked now, before
  // the body is read: an unauthenticated client can make the server hold no body at all.
  KH_HUB_TRY(handlers::require_write_token(ctx));
  // /api/{type}/{ns}/{name}/commit/{rev}: the one body that may be large.
  if (segments.size() >= 6 && segments[0] == "api" && segments[4] == "commit") {
    return BodyPlan{BodyPlan::Storage::file, max_body};
  }
  return BodyPlan{BodyPlan::Storage::memory, std::min(max_body, k_max_json_body)};
}

HubRouter::HubRouter(ServerSettings settings, VariantCheckQueue::Run checks)
    : m_config_stamp(file_stamp(settings.root / "config.toml")),
      m_token_stamp(settings.token_file.empty() ? FileStamp{} : file_stamp(settings.token_file)),
      m_store(settings.root),
      m_sessions(settings.session_lifetime),
      m_mirror(m_store, hub::make_curl_transport()),
      m_variant_checks(m_store, checks) {
  m_settings = std::make_shared<const ServerSettings>(std::move(settings));
}

std::shared_ptr<const ServerSettings> HubRouter::settings() const {
  std::lock_guard lock(m_settings_mutex);
  return m_settings;
}

util::Expected<bool> HubRouter::reload(Reload when) {
  const auto current = settings();
  const FileStamp config = file_stamp(current->root / "config.toml");
  const FileStamp tokens =
      current->token_file.empty() ? FileStamp{} : file_stamp(current->token_file);
  {
    std::lock_guard lock(m_settings_mutex);
    if (when == Reload::if_changed && config == m_config_stamp && tokens == m_token_stamp) {
      return false;
    }
    // Remember the stamps even when the read fails, so a broken file is reported once, not
    // on every check, and the next edit is read again.
    m_config_stamp = config;
    m_token_stamp = tokens;
  }
  // The two files apart: a broken config.toml must not keep a revoked token valid, nor a
  // damaged token file an old config.
  ServerSettings fresh = *current;
  std::string kept;
  if (!current->token_file.empty()) {
    if (auto tokens = read_token_file(current->token_file)) {
      fresh.tokens = std::move(*tokens);
    } else {
      kept = fmt::format("the token file cannot be used, so the {} token(s) read before stay "
                         "valid for reads and writes until it is fixed (empty or delete it to "
                         "revoke them all): {}",
                         current->tokens.size(), tokens.error().message);
    }
  }
  if (auto config = reread_settings(fresh)) {
    fresh = std::move(*config);
  } else {
    kept += fmt::format("{}config.toml was not read, its previous settings stay in force: {}",
                        kept.empty() ? "" : "; ", config.error().message);
  }
  {
    std::lock_guard lock(m_settings_mutex);
    m_settings = std::make_shared<const ServerSettings>(std::move(fresh));
  }
  if (!kept.empty()) {
    return util::fail(kept);
  }
  return true;
}

void HubRouter::watch_settings(std::chrono::milliseconds interval,
                               std::function<void(const std::string&)> log) {
  m_watch_interval = interval;
  m_mirror.set_log(log);
  m_log = std::move(log);
}

void HubRouter::reload_if_due() {
  if (m_watch_interval.count() <= 0) {
    return;
  }
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  std::int64_t due = m_next_check.load();
  // One request per interval wins the exchange and does the stat calls; the rest go on.
  if (now < due || !m_next_check.compare_exchange_strong(
                       due, now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      m_watch_interval)
                                      .count())) {
    return;
  }
  const auto reloaded = reload(Reload::if_changed);
  if (m_log) {
    if (!reloaded) {
      m_log("error: " + reloaded.error().message);
    } else if (*reloaded) {
      m_log("settings reloaded (config.toml or the token file changed)");
    }
  }
}

HttpResponse HubRouter::handle(const HttpRequest& request) {
  reload_if_due();
  // An address past its wrong-token limit (screen_bearer) is served as if it sent no token.
  if (bearer_token(request) && !m_bearer_throttle.allowed(request.peer)) {
    if (!is_read(request)) {
      return error_response(bearer_throttled().value());
    }
    HttpRequest anonymous = request;
    std::erase_if(anonymous.headers, [](const auto& field) { return field.first == "authorization"; });
    return handle(anonymous);
  }
  auto target = parse_request_target(request.target);
  if (!target) {
    return error_response(target.error());
  }
  // The snapshot lives until the answer is made, whatever a reload does meanwhile.
  const std::shared_ptr<const ServerSettings> settings = this->settings();
  handlers::Context ctx{*settings, m_store, request, *target};
  ctx.signer = &m_signer;
  ctx.variant_checks = &m_variant_checks;
  ctx.mirror = &m_mirror;
  const Segments segments(target->segments);
  // A session cookie counts for reads outside /api only: the API and every write keep
  // needing the Authorization header, which no other site's page can make a browser send.
  std::optional<std::string> session_token;
  const bool cookie_counts = is_read(request) && (segments.empty() || segments[0] != "api");
  if (cookie_counts) {
    if (const auto id = web::session_cookie(request)) {
      session_token = m_sessions.token_of(*id);
    }
  }
  if (session_token) {
    ctx.session_token = &*session_token;
  }
  HubExpected<HttpResponse> response;
  // A mirror fetches what the request names first, when it lacks it (upstream_mirror.hpp).
  const HubExpected<std::string> mirrored = m_mirror.prepare(ctx);
  if (!mirrored) {
    response = tl::unexpected(mirrored.error());
  } else if (is_session_route(segments)) {
    response = sign_in(ctx);
  } else if (segments.empty()) {
    response = is_read(request) ? handlers::index_page(ctx) : wrong_method(request);
  } else if (segments[0] == "api") {
    response = route_api(ctx, segments.subspan(1));
  } else {
    response = route_file(ctx, segments);
  }
  HttpResponse answer = response ? std::move(*response) : error_response(response.error());
  web::fill_account(answer, session_token && handlers::has_valid_token(ctx));
  finish_caching(request, answer, cookie_counts);
  if (mirrored && !mirrored->empty()) {
    answer.set_header(std::string(k_mirror_header), *mirrored);
  }
  return answer;
}

HubExpected<HttpResponse> HubRouter::sign_in(handlers::Context& ctx) {
  const HttpRequest& request = ctx.request;
  if (ctx.target.segments[0] == "logout") {
    if (request.method != "POST") {
      return wrong_method(request);
    }
    if (const auto id = web::session_cookie(request)) {
      m_sessions.close(*id);
    }
    return web::session_redirect("", ctx.settings.session_lifetime);
  }
  if (is_read(request)) {
    return web::login_page(false);
  }
  if (request.method != "POST") {
    return wrong_method(request);
  }
  // A form body is a query string: the target parser decodes it the same way.
  const auto form = parse_request_target("/?" + std::string(request.body));
  std::string token;
  std::string form_token;
  if (form) {
    for (const auto& [name, value] : form->query) {
      if (name == "token") {
        token = value;
      } else if (name == web::k_form_field) {
        form_token = value;
      }
    }
  }
  // Another site's page posting its own token would sign this browser in as that token's
  // holder (login CSRF): only the form this server gave this browser counts.
  if (!web::from_own_form(request, form_token)) {
    return web::login_page(true, 403);
  }
  if (!m_login_throttle.allowed(request.peer)) {
    return web::login_page(true, 429);
  }
  // The same check as the Authorization header's, against the token file in force.
  if (token.empty() || !ctx.settings.tokens.contains(token)) {
    m_login_throttle.failed(request.peer);
    return web::login_page(true);
  }
  m_login_throttle.succeeded(request.peer);
  return web::session_redirect(m_sessions.open(token), ctx.settings.session_lifetime);
}

}  // namespace kernelhub::server
