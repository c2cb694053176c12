// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <kernelhub/server/web/repo_view.hpp>

// The community pages: `.../discussions` (the discussions and pull requests of a repository)
// and `.../discussions/<N>` (one of them: its events; for a pull request the files it changes
// with their sizes, and the variant matrix and benchmarks of its head, `refs/pr/<N>`).
namespace kernelhub::server::web {

HubExpected<HttpResponse> discussions_page(handlers::Context& ctx, const RepoView& view);
HubExpected<HttpResponse> discussion_page(handlers::Context& ctx, const RepoView& view,
                                          const std::string& number);

}  // namespace kernelhub::server::web
