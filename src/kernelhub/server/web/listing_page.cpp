// SPDX-License-Identifier: Apache-2.0
// The listings: `/` and `/kernels` (kernels with their newest version, backends and licence),
// `/models` and `/datasets`; each filtered server-side by `?search=`, so no script is needed.
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include <kernelhub/server/web/html.hpp>
#include <kernelhub/server/web/markdown.hpp>
#include <kernelhub/server/web/page_layout.hpp>
#include <kernelhub/server/web/repo_view.hpp>
#include <kernelhub/server/web/variant_matrix.hpp>
#include <kernelhub/server/web/web_pages.hpp>

namespace kernelhub::server::web {

namespace {

// A search longer than any repo id matches nothing; cut it so the echo stays small.
constexpr std::size_t k_max_search = 200;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string readme_license(const RepoView& view, const std::string& commit) {
  auto file = read_file(view.repo.git, commit, "README.md", Content::bytes);
  if (!file || file->size > (std::uint64_t{1} << 20)) {
    return "";
  }
  return front_matter_license(std::string_view(file->data, file->size));
}

std::string chips(const std::vector<std::string>& names) {
  std::string html;
  for (const auto& name : names) {
    html += fmt::format("<span class=\"chip\">{}</span>", escape(name));
  }
  return html.empty() ? "<span class=\"muted\">—</span>" : html;
}

// One table row; empty when the reader may not see the repository (not even its name).
std::string listing_row(handlers::Context& ctx, const RepoId& id) {
  auto view = open_view(ctx, id);
  if (!view) {
    return "";
  }
  const std::string name_cell =
      fmt::format("<td><a class=\"repo\" href=\"{}\">{}</a>{}</td>", escape(view->base),
                  escape(id.id()),
                  view->repo.is_private ? " <span class=\"chip private\">private</span>" : "");
  auto refs = list_refs(view->repo.git.get());
  const auto shown = refs ? default_revision(*refs) : std::nullopt;
  if (!shown) {
    return fmt::format("<tr>{}<td colspan=\"3\" class=\"muted\">empty</td></tr>\n", name_cell);
  }
  const auto& [revision, commit] = *shown;
  std::string license;
  std::string extra;
  if (id.type == RepoType::kernel) {
    const auto versions = version_branches(*refs);
    const auto variants = collect_variants(view->repo.git, commit);
    for (const auto& variant : variants.value_or(std::vector<VariantInfo>{})) {
      if (license.empty()) {
        license = variant.license;
      }
    }
    extra = fmt::format(
        "<td class=\"version\">{}</td><td class=\"backends\">{}</td>",
        versions.empty() ? "<span class=\"muted\">none</span>"
                         : fmt::format("<a href=\"{}/tree/{}\">{}</a>", escape(view->base),
                                       escape(url_part(revision)), escape(revision)),
        chips(backends_of(variants.value_or(std::vector<VariantInfo>{}))));
  } else {
    auto summary = commit_summary(view->repo.git.get(), commit);
    extra = fmt::format("<td>{}</td>", summary ? utc_time(summary->time) : "");
  }
  if (license.empty()) {
    license = readme_license(*view, commit);
  }
  return fmt::format("<tr>{}{}<td class=\"license\">{}</td></tr>\n", name_cell, extra,
                     license.empty() ? "<span class=\"muted\">—</span>" : escape(license));
}


}  // namespace

HubExpected<HttpResponse> listing_page(handlers::Context& ctx, RepoType type) {
  std::string search(ctx.target.param("search").value_or(""));
  if (search.size() > k_max_search) {
    search.resize(k_max_search);
  }
  const std::string needle = lower(search);
  const std::string action = ctx.target.segments.empty() ? "/" : fmt::format("/{}", api_part(type));
  std::string body = fmt::format(
      "<h1>{}</h1>\n<form class=\"search\" method=\"get\" action=\"{}\" role=\"search\">"
      "<input type=\"search\" name=\"search\" value=\"{}\" placeholder=\"Filter by name\" "
      "aria-label=\"Filter by name\"> <button type=\"submit\">Search</button></form>\n",
      type_label(type), escape(action), escape(search));
  body += type == RepoType::kernel
              ? "<table id=\"repos\"><thead><tr><th>Kernel</th><th>Newest version</th>"
                "<th>Backends</th><th>Licence</th></tr></thead>\n<tbody>\n"
              : "<table id=\"repos\"><thead><tr><th>Name</th><th>Updated</th><th>Licence</th>"
                "</tr></thead>\n<tbody>\n";
  std::size_t shown = 0;
  for (const auto& id : ctx.store.list(type)) {
    if (!needle.empty() && lower(id.id()).find(needle) == std::string::npos) {
      continue;
    }
    const std::string row = listing_row(ctx, id);
    shown += row.empty() ? 0 : 1;
    body += row;
  }
  body += "</tbody></table>\n";
  if (shown == 0) {
    body += search.empty()
                ? fmt::format("<p class=\"muted\" id=\"none\">No {} yet.</p>\n",
                              lower(type_label(type)))
                : fmt::format("<p class=\"muted\" id=\"none\">No {} match \"{}\".</p>\n",
                              lower(type_label(type)), escape(search));
  }
  return html_response(page_html({std::string(type_label(type)), {}, body}));
}

}  // namespace kernelhub::server::web
