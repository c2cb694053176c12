// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/hub_router.hpp>

#include <span>

#include <fmt/format.h>

#include <kernelhub/server/handlers.hpp>

namespace kernelhub::server {

namespace {

using Segments = std::span<const std::string>;

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
  if (action == "preupload" && !args.empty()) {
    return request.method == "POST" ? handlers::preupload(ctx, id, joined)
                                    : wrong_method(request);
  }
  if (action == "commit" && !args.empty()) {
    return request.method == "POST" ? handlers::commit(ctx, id, joined) : wrong_method(request);
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
  if (!rest.empty()) {
    if (const auto type = repo_type_from_api_part(rest[0])) {
      return route_repo_api(ctx, *type, rest.subspan(1));
    }
  }
  return no_route(request);
}

// /[kernels/|datasets/]{ns}/{name}/resolve/{rev}/{path...}
HubExpected<HttpResponse> route_file(handlers::Context& ctx, Segments segments) {
  const HttpRequest& request = ctx.request;
  RepoType type = RepoType::model;
  if (!segments.empty()) {
    if (segments[0] == "kernels") {
      type = RepoType::kernel;
      segments = segments.subspan(1);
    } else if (segments[0] == "datasets") {
      type = RepoType::dataset;
      segments = segments.subspan(1);
    }
  }
  if (segments.size() < 5 || segments[2] != "resolve") {
    return no_route(request);
  }
  if (!is_read(request)) {
    return wrong_method(request);
  }
  const RepoId id = KH_HUB_TRY(make_repo_id(type, segments[0], segments[1]));
  return handlers::resolve_file(ctx, id, segments[3], join(segments.subspan(4)));
}

}  // namespace

HubRouter::HubRouter(ServerSettings settings)
    : m_settings(std::move(settings)), m_store(m_settings.root) {}

HttpResponse HubRouter::handle(const HttpRequest& request) {
  auto target = parse_request_target(request.target);
  if (!target) {
    return error_response(target.error());
  }
  handlers::Context ctx{m_settings, m_store, request, *target};
  const Segments segments(target->segments);
  HubExpected<HttpResponse> response;
  if (segments.empty()) {
    response = is_read(request) ? handlers::index_page(ctx) : wrong_method(request);
  } else if (segments[0] == "api") {
    response = route_api(ctx, segments.subspan(1));
  } else {
    response = route_file(ctx, segments);
  }
  return response ? std::move(*response) : error_response(response.error());
}

}  // namespace kernelhub::server
