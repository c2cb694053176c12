// SPDX-License-Identifier: Apache-2.0
// `GET /`: the kernels listing of the web pages (web/listing_page.cpp).
#include <kernelhub/server/handlers.hpp>
#include <kernelhub/server/web/web_pages.hpp>

namespace kernelhub::server::handlers {

HubExpected<HttpResponse> index_page(Context& ctx) {
  return web::listing_page(ctx, RepoType::kernel);
}

}  // namespace kernelhub::server::handlers
