// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/page_layout.hpp>

#include <fmt/format.h>

#include <kernelhub/server/web/html.hpp>
#include <kernelhub/server/web/login_page.hpp>

namespace kernelhub::server::web {

namespace {

// One small sheet for every page, inline so a page is one request and works offline. System
// fonts; a light theme that follows the reader's dark preference.
constexpr const char* k_style = R"css(
:root{--fg:#1d2330;--muted:#5c6577;--bg:#fff;--panel:#f5f7fa;--line:#dfe3ea;--link:#2456c7;
--accent:#e8590c;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--fg:#e4e7ee;--muted:#9aa3b5;--bg:#12151c;
--panel:#1b2029;--line:#2d3442;--link:#7ea6ff}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);
background:var(--bg)}
a{color:var(--link);text-decoration:none}a:hover{text-decoration:underline}
header.site{display:flex;gap:1.5em;align-items:center;padding:.6em 1.5em;
border-bottom:1px solid var(--line);background:var(--panel)}
header.site .brand{font-weight:700;color:var(--fg)}
header.site .brand span{color:var(--accent)}
main{max-width:1100px;margin:0 auto;padding:1em 1.5em 3em}
nav.crumbs{color:var(--muted);margin:.4em 0 1em}
nav.crumbs a,nav.crumbs span{margin-right:.3em}
h1{font-size:1.5em;margin:.2em 0 .6em;word-break:break-all}
h2{font-size:1.15em;margin:1.6em 0 .5em;padding-bottom:.2em;border-bottom:1px solid var(--line)}
table{border-collapse:collapse;width:100%;margin:.5em 0}
th,td{text-align:left;padding:.35em .6em;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--muted);font-weight:600;font-size:.9em}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
code,pre{font:13px/1.45 ui-monospace,"SFMono-Regular",Menlo,monospace}
pre{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:.8em;
overflow:auto}
.chip{display:inline-block;padding:0 .5em;margin:0 .25em .25em 0;border-radius:10px;
background:var(--panel);border:1px solid var(--line);font-size:.85em}
.private{border-color:var(--accent);color:var(--accent)}
.muted{color:var(--muted)}
.card{border:1px solid var(--line);border-radius:8px;padding:.2em 1.2em;margin:.5em 0}
.card img{max-width:100%}
form.search input[type=search]{width:22em;max-width:100%;padding:.35em .6em;
border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg)}
form.search button{padding:.35em .9em;border:1px solid var(--line);border-radius:6px;
background:var(--panel);color:var(--fg)}
.tabs a{margin-right:1em}
header.site .account{margin-left:auto}header.site form.signout{margin:0}
.error{color:var(--accent)}
figure.chart{margin:.5em 0;overflow-x:auto}
pre.diff .add{background:rgba(46,160,67,.18)}
pre.diff .del{background:rgba(248,81,73,.18)}pre.diff .hunk{color:var(--muted)}
pre.diff .file{font-weight:700}pre.diff .meta{color:var(--muted)}
)css";

}  // namespace

std::string page_html(const PageFrame& frame) {
  std::string crumbs;
  for (std::size_t i = 0; i < frame.crumbs.size(); ++i) {
    const auto& [label, href] = frame.crumbs[i];
    if (i > 0) {
      crumbs += "<span class=\"muted\">/</span>";
    }
    crumbs += href.empty() ? fmt::format("<span>{}</span>", escape(label))
                           : fmt::format("<a href=\"{}\">{}</a>", escape(href), escape(label));
  }
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>{} · kernelhub</title><style>{}</style></head>\n<body>\n"
      "<header class=\"site\"><a class=\"brand\" href=\"/\">kernel<span>hub</span></a>"
      "<a href=\"/kernels\">Kernels</a><a href=\"/models\">Models</a>"
      "<a href=\"/datasets\">Datasets</a>{}</header>\n<main>\n{}{}</main>\n</body></html>\n",
      escape(frame.title), k_style, k_account_marker,
      crumbs.empty() ? "" : fmt::format("<nav class=\"crumbs\">{}</nav>\n", crumbs), frame.body);
}

namespace {

void set_page_headers(HttpResponse& response) {
  response.content_type = "text/html; charset=utf-8";
  response.set_header("Cache-Control", "no-store");
  // Pages need no script, so none may run, even if some text escaped its escaping; images
  // of cards may come from anywhere, styles only from the page itself.
  response.set_header("Content-Security-Policy", std::string(k_content_security_policy));
  response.set_header("X-Content-Type-Options", "nosniff");
  response.set_header("Referrer-Policy", "same-origin");
}

}  // namespace

HttpResponse html_response(std::string html, int status) {
  HttpResponse response;
  response.status = status;
  set_page_headers(response);
  response.body = std::move(html);
  return response;
}

HttpResponse error_page(const HubError& error) {
  HttpResponse response = error_response(error);
  const std::string title = error.status == 404 ? "Not found" : "Error";
  set_page_headers(response);
  response.body = page_html(
      {title, {}, fmt::format("<h1>{}</h1>\n<p class=\"error\">{}</p>\n<p><a href=\"/\">Back to "
                              "the kernels</a></p>\n",
                              escape(title), escape(error.message))});
  return response;
}

}  // namespace kernelhub::server::web
