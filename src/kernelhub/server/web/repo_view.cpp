// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/repo_view.hpp>

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include <kernelhub/server/web/benchmark_chart.hpp>
#include <kernelhub/server/web/html.hpp>
#include <kernelhub/server/web/markdown.hpp>
#include <kernelhub/server/web/variant_matrix.hpp>

namespace kernelhub::server::web {

namespace {

// Cards larger than this are linked, not rendered: a page stays fast whatever is pushed.
constexpr std::uint64_t k_max_card_bytes = std::uint64_t{1} << 20;

}  // namespace

std::string_view type_label(RepoType type) {
  switch (type) {
    case RepoType::kernel:
      return "Kernels";
    case RepoType::dataset:
      return "Datasets";
    case RepoType::model:
      break;
  }
  return "Models";
}

HubExpected<RepoView> open_view(handlers::Context& ctx, const RepoId& id) {
  auto repo = ctx.store.open(id);
  if (!repo) {
    return tl::unexpected(repo.error());
  }
  if (repo->is_private && !handlers::has_valid_token(ctx)) {
    return repo_not_found(id.id());
  }
  return RepoView{id, std::move(*repo), fmt::format("/{}{}", url_prefix(id.type), id.id()),
                  ctx.settings.trusted_keys, ctx.variant_checks};
}

std::vector<VersionBranch> version_branches(const RepoRefs& refs) {
  std::vector<VersionBranch> versions;
  for (const auto& branch : refs.branches) {
    const std::string& name = branch.name;
    std::uint64_t number = 0;
    if (name.size() < 2 || name[0] != 'v' || name.size() > 12) {
      continue;
    }
    const auto [end, error] = std::from_chars(name.data() + 1, name.data() + name.size(), number);
    if (error != std::errc() || end != name.data() + name.size()) {
      continue;
    }
    versions.push_back({number, branch});
  }
  std::sort(versions.begin(), versions.end(),
            [](const VersionBranch& a, const VersionBranch& b) { return a.number > b.number; });
  return versions;
}

std::optional<std::pair<std::string, std::string>> default_revision(const RepoRefs& refs) {
  const auto versions = version_branches(refs);
  if (!versions.empty()) {
    return std::pair{versions.front().ref.name, versions.front().ref.target_commit};
  }
  for (const auto& branch : refs.branches) {
    if (branch.name == "main") {
      return std::pair{branch.name, branch.target_commit};
    }
  }
  if (!refs.branches.empty()) {
    return std::pair{refs.branches.front().name, refs.branches.front().target_commit};
  }
  return std::nullopt;
}

std::string revision_label(const std::string& revision) {
  const bool is_sha = revision.size() == 40 &&
                      std::all_of(revision.begin(), revision.end(), [](char c) {
                        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                      });
  return is_sha ? revision.substr(0, 12) : revision;
}

std::vector<std::pair<std::string, std::string>> repo_crumbs(const RepoView& view) {
  const std::string listing = fmt::format("/{}", api_part(view.id.type));
  return {{std::string(type_label(view.id.type)), listing},
          {view.id.ns, ""},
          {view.id.name, view.base}};
}

std::string repo_header(const RepoView& view, const std::string& revision, Tab active) {
  const std::string rev = url_part(revision);
  const auto tab = [&](Tab which, const std::string& href, std::string_view label) {
    return which == active ? fmt::format("<strong>{}</strong>", label)
                           : fmt::format("<a href=\"{}\">{}</a>", escape(href), label);
  };
  return fmt::format(
      "<h1 id=\"repo-id\">{}{}</h1>\n<nav class=\"tabs\">{} {} {} {}</nav>\n",
      escape(view.id.id()),
      view.repo.is_private ? " <span class=\"chip private\">private</span>" : "",
      tab(Tab::card, view.base, view.id.type == RepoType::kernel ? "Kernel card" : "Card"),
      tab(Tab::files, fmt::format("{}/tree/{}", view.base, rev), "Files"),
      tab(Tab::commits, fmt::format("{}/commits/{}", view.base, rev), "Commits"),
      tab(Tab::community, view.base + "/discussions", "Community"));
}

std::string card_html(const RepoView& view, const std::string& commit,
                      const std::string& revision) {
  auto header = read_file(view.repo.git, commit, "README.md", Content::header);
  if (!header) {
    return "<p class=\"muted\" id=\"no-card\">No card: this revision has no README.md.</p>\n";
  }
  const std::string rev = url_part(revision);
  if (header->size > k_max_card_bytes) {
    return fmt::format("<p class=\"muted\">The card is {}: <a href=\"{}/blob/{}/README.md\">"
                       "read it as a file</a>.</p>\n",
                       human_size(header->size), escape(view.base), escape(rev));
  }
  auto file = read_file(view.repo.git, commit, "README.md", Content::bytes);
  if (!file) {
    return fmt::format("<p class=\"muted\">The card cannot be read: {}</p>\n",
                       escape(file.error().message));
  }
  const LinkBases bases{fmt::format("{}/blob/{}", view.base, rev),
                        fmt::format("{}/resolve/{}", view.base, rev)};
  const auto rendered = page_markdown(std::string_view(file->data, file->size), bases);
  if (!rendered->refusal.empty()) {
    return fmt::format("<p class=\"muted\" id=\"markdown-refused\">The card is not rendered: {}. "
                       "<a href=\"{}/blob/{}/README.md\">Read it as a file</a>.</p>\n",
                       escape(rendered->refusal), escape(view.base), escape(rev));
  }
  return "<article class=\"card\" id=\"card\">\n" + rendered->html + "</article>\n";
}

std::string kernel_revision_html(const RepoView& view, const std::string& commit,
                                 const std::string& revision) {
  const std::string tree_base = fmt::format("{}/tree/{}", view.base, url_part(revision));
  std::string html = fmt::format("<h2 id=\"variants\">Variants of {}</h2>\n",
                                 escape(revision_label(revision)));
  auto variants = collect_variants(view.repo.git, commit);
  if (variants) {
    const bool verifying =
        view.variant_checks != nullptr && view.variant_checks->pending(view.id, commit);
    check_variants(view.repo.git, commit, *variants, view.trusted_keys, verifying);
  }
  html += variants ? render_variant_matrix(*variants, view.base, tree_base)
                   : fmt::format("<p class=\"muted\">The variants cannot be listed: {}</p>\n",
                                 escape(variants.error().message));
  auto runs = collect_benchmarks(view.repo.git, commit);
  if (!runs || runs->empty()) {
    return html;
  }
  html += "<h2 id=\"benchmarks\">Benchmarks</h2>\n<figure class=\"chart\">\n" +
          render_benchmark_svg(*runs) + "</figure>\n";
  html += "<table id=\"benchmark-table\"><thead><tr><th>Variant</th><th>Device</th>"
          "<th>Workload</th><th>Mean (ms)</th><th>Std (ms)</th><th>N</th><th>Result</th>"
          "</tr></thead>\n<tbody>\n";
  for (const auto& run : *runs) {
    for (const auto& workload : run.workloads) {
      html += fmt::format(
          "<tr><td>{}</td><td title=\"{}\">{}</td><td>{}</td><td class=\"num\">{:.4f}</td>"
          "<td class=\"num\">{:.4f}</td><td class=\"num\">{}</td>"
          "<td><a href=\"{}/blob/{}/{}\">JSON</a></td></tr>\n",
          escape(run.variant), escape(run.machine), escape(run.device), escape(workload.name),
          workload.mean_ms, workload.std_ms, workload.iterations, escape(view.base),
          escape(url_part(revision)), escape(url_path(run.path)));
    }
  }
  return html + "</tbody></table>\n";
}

}  // namespace kernelhub::server::web
