// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <span>
#include <string>

#include <kernelhub/server/handlers.hpp>

// The HTML pages `kernelhub serve` shows people, at the Hub's URL shapes:
//   /                                   the kernels, searchable (`?search=`)
//   /kernels  /models  /datasets        every repository of a type, searchable
//   /[kernels/|datasets/]ns/name        the repository: card, versions, variants, benchmarks
//   .../tree/<rev>[/<path>]             a folder, with sizes and download links
//   .../blob/<rev>/<path>               a file
//   .../commits/<rev>                   the history
//   .../commit/<rev>                    one commit: the files it changed, with sizes
//   .../discussions[/<N>]               discussions and pull requests (a PR's files and head)
// Pages are plain HTML with one inline stylesheet: no script. A private repository is shown
// only to a reader whose bearer token the server accepts (in the Authorization header, or in
// the session a browser opened at /login, login_page.hpp), and is otherwise answered exactly
// as a missing one (the API's rule).
namespace kernelhub::server::web {

// `segments` are the request's path segments after the type prefix (`kernels`, `datasets`,
// none for models). 404 when they name no page.
HubExpected<HttpResponse> route_page(handlers::Context& ctx, RepoType type,
                                     std::span<const std::string> segments);

// The listing of one repository type (`/kernels`, `/models`, `/datasets`, and `/` for kernels).
HubExpected<HttpResponse> listing_page(handlers::Context& ctx, RepoType type);

}  // namespace kernelhub::server::web
