// SPDX-License-Identifier: Apache-2.0
// Why the LFS objects are fetched lazily (fetch_lfs, on the first request for each) rather than
// with the git fetch: a kernel repository keeps a build of every variant of every version, and
// a loader downloads one variant of one version; fetching every object of every pointer would
// multiply what the mirror pulls by the number of variants and versions. The git objects are
// small (pointers and sources) and fetched whole, so every commit id the upstream had resolves
// here, and kernels.lock files written against the upstream stay valid.
#include <kernelhub/server/upstream_mirror.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/hub/http_transport.hpp>
#include <kernelhub/server/git_handles.hpp>
#include <kernelhub/server/handlers.hpp>
#include <kernelhub/server/lfs_object_store.hpp>
#include <kernelhub/server/repository_fetch.hpp>
#include <kernelhub/server/repository_reader.hpp>
#include <kernelhub/util/unique_fd.hpp>

namespace kernelhub::server {

namespace {

namespace fs = std::filesystem;
using Segments = std::span<const std::string>;
using nlohmann::json;

constexpr int k_max_redirects = 5;

std::string join(Segments parts) {
  std::string out;
  for (const auto& part : parts) {
    out += (out.empty() ? "" : "/") + part;
  }
  return out;
}

bool is_read_method(const HttpRequest& request) {
  return request.method == "GET" || request.method == "HEAD";
}

std::optional<MirrorTarget> make_target(RepoType type, const std::string& ns,
                                        const std::string& name) {
  auto id = make_repo_id(type, ns, name);
  if (!id) {
    return std::nullopt;  // the router answers the bad id
  }
  return MirrorTarget{*id, std::nullopt, false, false};
}

// /api/{models|datasets|kernels}/{ns}/{name}[/{action}/{args...}]
std::optional<MirrorTarget> api_target(const HttpRequest& request, Segments rest) {
  if (rest.size() < 3) {
    return std::nullopt;
  }
  const auto type = repo_type_from_api_part(rest[0]);
  if (!type) {
    return std::nullopt;
  }
  auto target = make_target(*type, rest[1], rest[2]);
  if (!target) {
    return std::nullopt;
  }
  const Segments tail = rest.subspan(3);
  const std::string action = tail.empty() ? "" : tail[0];
  const Segments args = tail.empty() ? tail : tail.subspan(1);
  if (!args.empty()) {
    if (action == "tree") {
      target->revision = args[0];
    } else if (action == "revision" || action == "commits" || action == "paths-info" ||
               action == "variant-checks") {
      target->revision = join(args);
    }
  }
  target->writes = !is_read_method(request) && action != "paths-info";
  return target;
}

// The `operation` of an LFS batch request's body.
bool is_lfs_upload(const HttpRequest& request) {
  const json body = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  return body.is_object() && body.value("operation", json()) == "upload";
}

// Everything outside /api: git, LFS, resolve and the web pages, each under
// `[kernels/|datasets/]{ns}/{name}`.
std::optional<MirrorTarget> file_target(const HttpRequest& request, Segments segments) {
  RepoType type = RepoType::model;
  if (!segments.empty() && (segments[0] == "kernels" || segments[0] == "datasets")) {
    type = segments[0] == "kernels" ? RepoType::kernel : RepoType::dataset;
    segments = segments.subspan(1);
  }
  if (segments.size() < 2) {
    return std::nullopt;  // listings, /login, the index
  }
  std::string name = segments[1];
  const bool git = name.ends_with(".git");
  if (git) {
    name.resize(name.size() - 4);
  }
  auto target = make_target(type, segments[0], name);
  if (!target) {
    return std::nullopt;
  }
  const Segments rest = segments.subspan(2);
  if (git && rest.size() >= 3 && rest[0] == "info" && rest[1] == "lfs" && rest[2] == "objects") {
    // The batch API; the object URLs (uploads) carry a signature only a batch upload gives.
    const bool batch = rest.size() == 4 && rest[3] == "batch";
    target->lfs = true;
    target->writes = !batch || is_lfs_upload(request);
    return target;
  }
  if ((rest.size() == 1 && rest[0] == "git-upload-pack") ||
      (rest.size() == 2 && rest[0] == "info" && rest[1] == "refs")) {
    return target;  // a clone or fetch: a read
  }
  if (rest.size() == 1 && rest[0] == "git-receive-pack") {
    target->writes = true;
    return target;
  }
  if (rest.size() >= 2 && (rest[0] == "resolve" || rest[0] == "tree" || rest[0] == "blob")) {
    target->revision = rest[1];
  }
  target->writes = !is_read_method(request);
  return target;
}


std::string stale(const std::string& error) {
  return "stale; upstream error: " + error;
}

std::string first_line(std::string text) {
  text = text.substr(0, text.find('\n'));
  return text.size() > 300 ? text.substr(0, 300) + "..." : text;
}

// What the upstream says of a repository (GET /api/{type}/{id}).
struct UpstreamInfo {
  int status = 0;  // 0: no answer
  bool is_private = false;
  std::string error;
};

UpstreamInfo ask_upstream(hub::Transport& transport, const MirrorSettings& settings,
                          const RepoId& id) {
  hub::HttpRequest request;
  request.url = fmt::format("{}/api/{}/{}", settings.upstream, api_part(id.type), id.id());
  if (!settings.token.empty()) {
    request.headers.emplace_back("Authorization", "Bearer " + settings.token);
  }
  const auto response = transport.perform(request);
  if (!response) {
    return {0, false, fmt::format("{} cannot be reached: {}", settings.upstream,
                                  response.error().message)};
  }
  UpstreamInfo info{static_cast<int>(response->status), false, ""};
  if (response->status != 200) {
    const auto message = response->headers.get("X-Error-Message");
    info.error = fmt::format("{} answered {} for {}{}", settings.upstream, response->status,
                             id.id(), message ? ": " + first_line(*message) : "");
    return info;
  }
  const json body = json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  info.is_private = body.is_object() && body.value("private", false);
  return info;
}

std::string clone_url(const MirrorSettings& settings, const RepoId& id) {
  return fmt::format("{}/{}{}.git", settings.upstream, url_prefix(id.type), id.id());
}

bool same_origin(const std::string& a, const std::string& b) {
  const auto origin = [](const std::string& url) {
    const std::size_t scheme = url.find("://");
    const std::size_t path = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
    return url.substr(0, path);
  };
  return origin(a) == origin(b);
}

// Downloads `url` (following redirects, the token dropped on another origin) into `fd`.
HubExpected<void> download_to(hub::Transport& transport, std::string url,
                              std::vector<std::pair<std::string, std::string>> headers, int fd) {
  for (int hop = 0; hop <= k_max_redirects; ++hop) {
    if (::ftruncate(fd, 0) != 0 || ::lseek(fd, 0, SEEK_SET) != 0) {
      return hub_fail(500, "", fmt::format("cannot reset a temporary file: {}",
                                           std::strerror(errno)));
    }
    hub::HttpRequest request;
    request.url = url;
    request.headers = headers;
    bool write_failed = false;
    request.sink = [fd, &write_failed](std::string_view chunk) {
      while (!chunk.empty()) {
        const ssize_t n = ::write(fd, chunk.data(), chunk.size());
        if (n < 0 && errno == EINTR) {
          continue;
        }
        if (n <= 0) {
          write_failed = true;
          return false;
        }
        chunk.remove_prefix(static_cast<std::size_t>(n));
      }
      return true;
    };
    const auto response = transport.perform(request);
    if (write_failed) {
      return hub_fail(500, "", fmt::format("cannot write a fetched LFS object: {}",
                                           std::strerror(errno)));
    }
    if (!response) {
      return hub_fail(503, "", fmt::format("cannot download {}: {}", url,
                                           response.error().message));
    }
    if (response->status >= 300 && response->status < 400) {
      const auto location = response->headers.get("Location");
      if (!location) {
        return hub_fail(503, "", fmt::format("{} answered {} with no Location", url,
                                             response->status));
      }
      std::string next = *location;
      if (next.starts_with("/")) {
        const std::size_t scheme = url.find("://");
        next = url.substr(0, url.find('/', scheme + 3)) + next;
      }
      if (!same_origin(url, next)) {
        std::erase_if(headers, [](const auto& h) { return h.first == "Authorization"; });
      }
      url = std::move(next);
      continue;
    }
    if (response->status != 200) {
      return hub_fail(503, "", fmt::format("{} answered {}", url, response->status));
    }
    return {};
  }
  return hub_fail(503, "", fmt::format("more than {} redirects from {}", k_max_redirects, url));
}

}  // namespace

std::optional<MirrorTarget> mirror_target(const HttpRequest& request, Segments segments) {
  if (segments.empty()) {
    return std::nullopt;
  }
  if (segments[0] == "api") {
    return api_target(request, segments.subspan(1));
  }
  if (segments[0].starts_with(".")) {
    return std::nullopt;  // /.kernelhub/lfs/...: signed downloads of what is already stored
  }
  return file_target(request, segments);
}

UpstreamMirror::UpstreamMirror(RepositoryStore& store, std::shared_ptr<hub::Transport> transport)
    : m_store(store), m_transport(std::move(transport)) {}

UpstreamMirror::~UpstreamMirror() = default;

void UpstreamMirror::log(const std::string& message) const {
  if (m_log) {
    m_log("mirror: " + message);
  }
}

UpstreamMirror::RepoState UpstreamMirror::state_of(const RepoId& id) {
  const std::string key = m_store.directory(id).string();
  {
    std::lock_guard lock(m_mutex);
    const auto it = m_states.find(key);
    if (it != m_states.end() && it->second.known) {
      return it->second;
    }
  }
  RepoState state;
  state.known = true;
  state.upstream = mirrored_upstream(m_store.directory(id));
  record(id, state);
  return state;
}

void UpstreamMirror::record(const RepoId& id, const RepoState& state) {
  std::lock_guard lock(m_mutex);
  m_states[m_store.directory(id).string()] = state;
}

HubExpected<std::string> UpstreamMirror::prepare(handlers::Context& ctx) {
  const MirrorSettings& settings = ctx.settings.mirror;
  if (!settings.enabled()) {
    return std::string();
  }
  const auto target = mirror_target(ctx.request, ctx.target.segments);
  if (!target) {
    return std::string();
  }
  const bool has_token = handlers::has_valid_token(ctx);
  RepoId id = target->id;
  auto local = m_store.open(id);
  if (!local && id.type == RepoType::model) {
    // As open_for_read: a model id falls back to the kernel repository of the same name.
    RepoId kernel = id;
    kernel.type = RepoType::kernel;
    if (auto found = m_store.open(kernel)) {
      id = kernel;
      local = std::move(found);
    }
  }
  if (!local) {
    if (target->writes) {
      return std::string();  // answered as any write to a missing repository
    }
    const Need need{Need::Kind::repository, "", has_token};
    Synced synced = sync(settings, id, need);
    if (!synced.ok && synced.status == 404 && id.type == RepoType::model) {
      RepoId kernel = id;
      kernel.type = RepoType::kernel;
      Synced as_kernel = sync(settings, kernel, need);
      if (as_kernel.ok || as_kernel.status != 404) {
        synced = std::move(as_kernel);
      }
    }
    if (!synced.ok) {
      return hub_fail(synced.status, synced.status == 404 ? "RepoNotFound" : "", synced.error);
    }
    return std::string();
  }
  const RepoState state = state_of(id);
  if (!state.upstream) {
    return std::string();  // this hub's own repository
  }
  if (target->writes) {
    return hub_fail(403, "",
                    fmt::format("{} is a read-only mirror of {}: write there (an operator can "
                                "make it local, see docs/mirror.md)",
                                id.id(), *state.upstream));
  }
  if (local->is_private && !has_token) {
    return std::string();  // the handler's 404, with no upstream request made for it
  }
  bool miss = false;
  if (target->revision) {
    const auto resolved = resolve_revision(local->git.get(), *target->revision);
    miss = !resolved && resolved.error().status == 404;
  }
  local = tl::unexpected(HubError{});  // the handle back to its pool before the fetch
  // A full commit id the mirror has names the same files forever: nothing to refresh.
  const bool pinned = !miss && target->revision && target->revision->size() == 40 &&
                      target->revision->find_first_not_of("0123456789abcdef") == std::string::npos;
  const bool due = !target->lfs && !pinned && Clock::now() - state.started >= settings.refresh;
  if (!miss && !due) {
    return state.error.empty() ? std::string() : stale(state.error);
  }
  const Need need{miss ? Need::Kind::revision : Need::Kind::refresh,
                  target->revision.value_or(""), has_token};
  const Synced synced = sync(settings, id, need);
  if (synced.ok) {
    return std::string();
  }
  if (miss) {
    return hub_fail(synced.status == 404 ? 404 : 503, synced.status == 404 ? "RevisionNotFound" : "",
                    fmt::format("revision \"{}\" of {} is not on this mirror, and its upstream "
                                "could not be asked: {}",
                                *target->revision, id.id(), synced.error));
  }
  return stale(synced.error);
}

UpstreamMirror::Synced UpstreamMirror::sync(const MirrorSettings& settings, const RepoId& id,
                                            const Need& need) {
  // The requests of clients with a token and without one fly apart: a private repository is
  // fetched for the first only, and the second must not be handed the first's result.
  const std::string key =
      fmt::format("{}|{}", m_store.directory(id).string(), need.client_has_token ? "token" : "anon");
  return m_repo_flights.run(key,
                            [&] { return sync_once(settings, id, need); });
}

UpstreamMirror::Synced UpstreamMirror::sync_once(const MirrorSettings& settings, const RepoId& id,
                                                 const Need& need) {
  const fs::path dir = m_store.directory(id);
  std::error_code ec;
  const bool exists = fs::exists(dir, ec);
  RepoState state = exists ? state_of(id) : RepoState{};
  const Synced recorded = state.error.empty() ? Synced{true, 0, ""} : Synced{false, 503, state.error};
  // A flight that ended between this request's look and this flight may have done its work
  // (its waiters are gone, this request came too late to be one).
  if (exists && need.kind == Need::Kind::repository) {
    return Synced{true, 0, ""};
  }
  if (exists && need.kind == Need::Kind::refresh &&
      Clock::now() - state.started < settings.refresh) {
    return recorded;
  }
  if (exists && need.kind == Need::Kind::revision) {
    if (auto opened = m_store.open(id); opened && resolve_revision(opened->git.get(), need.revision)) {
      return Synced{true, 0, ""};
    }
  }
  const bool client_has_token = need.client_has_token;
  const auto started = Clock::now();
  const auto failed = [&](int status, std::string error) {
    if (exists) {
      state.started = started;
      state.checked = Clock::now();
      state.error = error;
      record(id, state);
    }
    log(fmt::format("{} {}: {}", api_part(id.type), id.id(), error));
    return Synced{false, status, std::move(error)};
  };
  const UpstreamInfo info = ask_upstream(*m_transport, settings, id);
  if (info.status == 0) {
    return failed(503, info.error);
  }
  if (info.status == 401 || info.status == 403 || info.status == 404) {
    return failed(404, fmt::format("repository {} is not on this mirror nor on its upstream: {}",
                                   id.id(), info.error));
  }
  if (info.status != 200) {
    return failed(503, info.error);
  }
  if (info.is_private && !client_has_token && !exists) {
    // Fetched only for this hub's own authorized users; to the others it does not exist.
    return Synced{false, 404, fmt::format("Repository {} not found", id.id())};
  }
  const UpstreamSource source{clone_url(settings, id), settings.token};
  if (!exists) {
    fs::create_directories(dir.parent_path(), ec);
    // A name starting with '.' is no repository: listings skip it, and a restart removes it.
    const fs::path temp =
        dir.parent_path() / fmt::format(".tmp-{}-{}", id.name, git::unique_suffix());
    auto made = init_mirror_repository(temp, settings.upstream, info.is_private);
    auto fetched = made ? fetch_into(temp, source) : tl::unexpected(made.error());
    if (!fetched) {
      fs::remove_all(temp, ec);
      // Our own upstream answers a model's info for a kernel of the same name, and then has
      // no model to clone: the clone's 404 is the repository's absence.
      const bool absent = fetched.error().message.find("404") != std::string::npos;
      Synced failure{false, absent ? 404 : 503,
                     fmt::format("cannot fetch {} from {}: {}", id.id(), settings.upstream,
                                 fetched.error().message)};
      log(failure.error);
      return failure;
    }
    fs::rename(temp, dir, ec);
    if (ec) {
      fs::remove_all(temp, ec);  // another process (or flight) made it first
    } else {
      log(fmt::format("fetched {} {} from {}", api_part(id.type), id.id(), settings.upstream));
    }
  } else {
    std::lock_guard write(m_store.write_mutex(id));
    auto fetched = fetch_into(dir, source);
    if (!fetched) {
      return failed(503, fmt::format("cannot fetch {} from {}: {}", id.id(), settings.upstream,
                                     fetched.error().message));
    }
    if (fetched->changed > 0) {
      log(fmt::format("refreshed {} {} from {}: {} ref(s) changed", api_part(id.type), id.id(),
                      settings.upstream, fetched->changed));
    }
    auto opened = m_store.open(id);
    if (opened && opened->is_private != info.is_private) {
      if (auto flagged = set_private_flag(dir, info.is_private); !flagged) {
        return failed(503, flagged.error().message);
      }
      m_store.forget(id);
    }
  }
  RepoState fresh;
  fresh.known = true;
  fresh.upstream = settings.upstream;
  fresh.started = started;
  fresh.checked = Clock::now();
  record(id, fresh);
  return Synced{true, 0, ""};
}

HubExpected<void> UpstreamMirror::fetch_lfs(const MirrorSettings& settings, const RepoId& id,
                                            const std::string& oid, std::uint64_t size) {
  const fs::path dir = m_store.directory(id);
  const LfsObjectStore store(dir);
  if (!settings.enabled() || store.stored_size(oid) == size || !state_of(id).upstream) {
    return {};
  }
  return m_lfs_flights.run(dir.string() + "#" + oid, [&]() -> HubExpected<void> {
    if (store.stored_size(oid) == size) {
      return {};
    }
    const auto fail = [&](const std::string& why) {
      return hub_fail(503, "", fmt::format("LFS object {} of {} is not on this mirror yet and "
                                           "cannot be fetched from {}: {}",
                                           oid, id.id(), settings.upstream, why));
    };
    hub::HttpRequest batch;
    batch.method = "POST";
    batch.url = fmt::format("{}/{}{}.git/info/lfs/objects/batch", settings.upstream,
                            url_prefix(id.type), id.id());
    batch.headers = {{"Accept", "application/vnd.git-lfs+json"},
                     {"Content-Type", "application/vnd.git-lfs+json"}};
    if (!settings.token.empty()) {
      batch.headers.emplace_back("Authorization", "Bearer " + settings.token);
    }
    batch.body = json{{"operation", "download"},
                      {"transfers", {"basic"}},
                      {"objects", {{{"oid", oid}, {"size", size}}}},
                      {"hash_algo", "sha256"}}
                     .dump();
    const auto answer = m_transport->perform(batch);
    if (!answer) {
      return fail(answer.error().message);
    }
    if (answer->status != 200) {
      return fail(fmt::format("the batch API answered {}", answer->status));
    }
    const json body = json::parse(answer->body, nullptr, /*allow_exceptions=*/false);
    const json* action = nullptr;
    if (body.is_object() && body.contains("objects") && body["objects"].is_array() &&
        !body["objects"].empty() && body["objects"][0].is_object()) {
      const json& object = body["objects"][0];
      if (object.contains("error")) {
        return fail(object["error"].value("message", std::string("an error")));
      }
      if (object.contains("actions") && object["actions"].contains("download")) {
        action = &object["actions"]["download"];
      }
    }
    if (action == nullptr || !action->is_object() || !action->value("href", json()).is_string()) {
      return fail("the batch API's answer has no download action");
    }
    std::vector<std::pair<std::string, std::string>> headers;
    if (const auto it = action->find("header"); it != action->end() && it->is_object()) {
      for (const auto& [name, value] : it->items()) {
        if (value.is_string()) {
          headers.emplace_back(name, value.get<std::string>());
        }
      }
    }
    const fs::path temp_dir = dir / "lfs" / "tmp";
    std::error_code ec;
    fs::create_directories(temp_dir, ec);
    std::string pattern = (temp_dir / "mirror-XXXXXX").string();
    const util::UniqueFd fd(::mkostemp(pattern.data(), O_CLOEXEC));
    if (!fd) {
      return hub_fail(500, "", fmt::format("cannot create a file in {}: {}", temp_dir.string(),
                                           std::strerror(errno)));
    }
    auto downloaded = download_to(*m_transport, action->at("href").get<std::string>(),
                                  std::move(headers), fd.get());
    auto installed = downloaded ? LfsObjectStore(dir).install(pattern, LfsPointer{oid, size})
                                : HubExpected<void>(tl::unexpected(downloaded.error()));
    fs::remove(pattern, ec);
    if (!installed) {
      log(fmt::format("LFS object {} of {}: {}", oid, id.id(), installed.error().message));
      return fail(installed.error().message);
    }
    log(fmt::format("fetched LFS object {} ({} bytes) of {} {}", oid, size, api_part(id.type),
                    id.id()));
    return {};
  });
}

}  // namespace kernelhub::server
