// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <kernelhub/server/http_message.hpp>

namespace kernelhub::server::web {

// What one page says; `page_html` adds the frame every page shares (the site bar, the
// breadcrumbs, the stylesheet). `body` is HTML the caller has already escaped.
struct PageFrame {
  std::string title;                                      // plain text, escaped here
  std::vector<std::pair<std::string, std::string>> crumbs;  // (label, href), plain text
  std::string body;
};

std::string page_html(const PageFrame& frame);

// Sent with every page: no script, no plugin, no framing; styles inline only.
inline constexpr std::string_view k_content_security_policy =
    "default-src 'none'; style-src 'unsafe-inline'; img-src * data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'";

// A 200 (or `status`) text/html answer that no cache keeps: pages show private repositories
// to readers with a token, and what a shared cache stored for one must not reach the next.
HttpResponse html_response(std::string html, int status = 200);

// An error as a page: the status, X-Error-Code and X-Error-Message of the API's answer (so
// tools see the same error) with a short page a browser can show.
HttpResponse error_page(const HubError& error);

}  // namespace kernelhub::server::web
