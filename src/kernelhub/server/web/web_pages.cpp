// SPDX-License-Identifier: Apache-2.0
// The repository pages: the overview, the file browser (tree, blob) and the history.
#include <kernelhub/server/web/web_pages.hpp>

#include <fmt/format.h>

#include <kernelhub/server/repository_log.hpp>
#include <kernelhub/server/repository_merge.hpp>
#include <kernelhub/server/web/diff_view.hpp>
#include <kernelhub/server/web/discussion_pages.hpp>
#include <kernelhub/server/web/file_changes.hpp>
#include <kernelhub/server/web/html.hpp>
#include <kernelhub/server/web/markdown.hpp>
#include <kernelhub/server/web/page_layout.hpp>
#include <kernelhub/server/web/repo_view.hpp>
#include <kernelhub/server/web/variant_matrix.hpp>

namespace kernelhub::server::web {

namespace {

using Segments = std::span<const std::string>;

// Files up to this size are shown inline on their page; larger ones only link to the bytes.
constexpr std::uint64_t k_max_preview_bytes = std::uint64_t{512} << 10;
constexpr std::size_t k_commits_per_page = 100;
// A page shows this much of a diff at most (the rest is cut with a line that says so).
constexpr std::size_t k_max_page_diff = std::size_t{512} << 10;
// A folder listing shows this many entries; a folder pushed with more stays browsable through
// the API's paged tree listing.
constexpr std::size_t k_max_folder_entries = 1000;

std::string join(Segments parts) {
  std::string out;
  for (const auto& part : parts) {
    out += (out.empty() ? "" : "/") + part;
  }
  return out;
}

struct Resolved {
  std::string revision;  // as the URL names it
  std::string commit;
};

HubExpected<Resolved> resolve(const RepoView& view, const std::string& revision) {
  KH_HUB_TRY(check_revision(revision));
  return Resolved{revision, KH_HUB_TRY(resolve_revision(view.repo.git.get(), revision))};
}

// Revision, then each folder of `path`, as crumbs that link back up the tree.
std::string path_crumbs(const RepoView& view, const Resolved& at, const std::string& path) {
  const std::string tree = fmt::format("{}/tree/{}", view.base, url_part(at.revision));
  std::string html = fmt::format("<nav class=\"path\" id=\"path\"><a href=\"{}\">{}</a>",
                                 escape(tree), escape(revision_label(at.revision)));
  std::size_t start = 0;
  while (start < path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    html += fmt::format(" / <a href=\"{}/{}\">{}</a>", escape(tree),
                        escape(url_path(path.substr(0, end))),
                        escape(path.substr(start, end - start)));
    start = end + 1;
  }
  return html + "</nav>\n";
}

// How to load the kernel from this hub: its own URL as HF_ENDPOINT (set before kernels is
// imported, which reads it once), trust_remote_code unless config.toml trusts the publisher,
// and backend="cpu" for a kernel whose variants are all cpu (the loader picks the GPU's backend
// where one is present). A Python snippet, run as it is by tests/e2e/test_card_snippets.py.
std::string load_html(const handlers::Context& ctx, const RepoView& view,
                      const std::vector<VersionBranch>& versions, const std::string& commit) {
  const std::string id = view.id.id();
  const auto org = ctx.settings.organizations.find(view.id.ns);
  const bool trusted =
      org != ctx.settings.organizations.end() && org->second.trusted_kernel_publisher;
  const auto variants = collect_variants(view.repo.git, commit);
  const bool cpu_only =
      variants && backends_of(*variants) == std::vector<std::string>{"cpu"};
  const std::string pin =
      versions.empty() ? "revision=\"main\"" : fmt::format("version={}", versions.front().number);
  std::string html = fmt::format(
      "<h2 id=\"load\">How to load it</h2>\n"
      "<pre id=\"load-python\"><code>import os\n\n"
      "os.environ[\"HF_ENDPOINT\"] = \"{0}\"  # this hub; set before kernels is imported\n\n"
      "from kernels import get_kernel\n\n"
      "{1}kernel = get_kernel(\"{2}\", {3}{4}{5})</code></pre>\n",
      escape(ctx.request.base_url),
      trusted ? "" : escape(fmt::format("# {} is not a trusted kernel publisher on this hub: "
                                        "loading runs its code.\n", view.id.ns)),
      escape(id), escape(pin), cpu_only ? ", backend=&quot;cpu&quot;" : "",
      trusted ? "" : ", trust_remote_code=True");
  if (versions.empty()) {
    return html;
  }
  const VersionBranch& newest = versions.front();
  return html + fmt::format(
      "<p>Or lock it in a project: <code>pyproject.toml</code></p>\n"
      "<pre id=\"load-pyproject\"><code>[tool.kernels.dependencies]\n\"{0}\" = {1}</code></pre>\n"
      "<p>and the entry <code>kernelhub lock</code> writes to <code>kernels.lock</code> for "
      "v{1} today:</p>\n"
      "<pre id=\"load-lock\"><code>{{\n  \"dependency\": {{\n    \"repo-id\": \"{0}\",\n"
      "    \"version\": {1}\n  }},\n  \"lock\": {{\n    \"commit\": \"{2}\"\n  }}\n}}"
      "</code></pre>\n",
      escape(id), newest.number, escape(newest.ref.target_commit));
}

std::string versions_html(const RepoView& view, const std::vector<VersionBranch>& versions,
                          const std::string& shown) {
  std::string html = "<h2 id=\"versions\">Versions</h2>\n<table id=\"version-list\"><thead><tr>"
                     "<th>Version</th><th>Commit</th><th>Date</th><th>Title</th></tr></thead>\n"
                     "<tbody>\n";
  for (const auto& version : versions) {
    auto summary = commit_summary(view.repo.git.get(), version.ref.target_commit);
    html += fmt::format(
        "<tr><td><a href=\"{0}/tree/{1}\">{2}</a>{3}</td><td><code>{4}</code></td><td>{5}</td>"
        "<td>{6}</td></tr>\n",
        escape(view.base), escape(url_part(version.ref.name)), escape(version.ref.name),
        version.ref.name == shown ? " <span class=\"chip\">shown</span>" : "",
        version.ref.target_commit.substr(0, 12), summary ? utc_time(summary->time) : "",
        summary ? escape(summary->title) : "");
  }
  return html + "</tbody></table>\n";
}

std::string other_refs_html(const RepoView& view, const RepoRefs& refs) {
  std::string html;
  for (const auto* list : {&refs.branches, &refs.tags}) {
    for (const auto& ref : *list) {
      html += fmt::format("<a class=\"chip\" href=\"{}/tree/{}\">{}</a>", escape(view.base),
                          escape(url_part(ref.name)), escape(ref.name));
    }
  }
  return html.empty() ? "" : "<p id=\"refs\">Branches and tags: " + html + "</p>\n";
}

HubExpected<HttpResponse> overview_page(handlers::Context& ctx, const RepoId& id) {
  const RepoView view = KH_HUB_TRY(open_view(ctx, id));
  const RepoRefs refs = KH_HUB_TRY(list_refs(view.repo.git.get()));
  const auto shown = default_revision(refs);
  if (!shown) {
    return html_response(page_html(
        {id.id(), repo_crumbs(view),
         repo_header(view, "main", Tab::card) + "<p class=\"muted\">This repository is empty.</p>\n"}));
  }
  const auto& [revision, commit] = *shown;
  std::string body = repo_header(view, revision, Tab::card);
  const auto versions = version_branches(refs);
  if (id.type == RepoType::kernel) {
    body += fmt::format("<p class=\"muted\">Showing <strong id=\"shown-revision\">{}</strong>"
                        "{}.</p>\n",
                        escape(revision), versions.empty() ? "" : ", the newest version");
  }
  body += card_html(view, commit, revision);
  if (id.type == RepoType::kernel) {
    if (!versions.empty()) {
      body += versions_html(view, versions, revision);
    }
    body += kernel_revision_html(view, commit, revision);
    body += load_html(ctx, view, versions, commit);
  } else {
    const std::string type = id.type == RepoType::dataset ? ", repo_type=\"dataset\"" : "";
    body += fmt::format(
        "<h2 id=\"load\">How to download it</h2>\n<pre><code>from huggingface_hub import "
        "snapshot_download\n\npath = snapshot_download(\"{}\"{})</code></pre>\n",
        escape(id.id()), escape(type));
  }
  body += other_refs_html(view, refs);
  return html_response(page_html({id.id(), repo_crumbs(view), body}));
}

HubExpected<HttpResponse> tree_page(handlers::Context& ctx, const RepoId& id,
                                    const std::string& revision, const std::string& path) {
  const RepoView view = KH_HUB_TRY(open_view(ctx, id));
  const Resolved at = KH_HUB_TRY(resolve(view, revision));
  if (!path.empty()) {
    KH_HUB_TRY(check_repo_path(path));
  }
  const auto items =
      KH_HUB_TRY(list_tree(view.repo.git.get(), at.commit, path, Recursive::no, Sizes::read));
  if (items.size() == 1 && !items.front().is_directory && items.front().path == path) {
    // The Hub answers a tree URL of a file with the file's page.
    HttpResponse moved = html_response("", 302);
    moved.set_header("Location", fmt::format("{}/blob/{}/{}", view.base, url_part(revision),
                                             url_path(path)));
    return moved;
  }
  const std::string rev = url_part(at.revision);
  std::string body = repo_header(view, at.revision, Tab::files) + path_crumbs(view, at, path);
  body += fmt::format("<p class=\"muted\">Commit <code id=\"commit\">{}</code></p>\n",
                      at.commit.substr(0, 12));
  body += "<table id=\"files\"><thead><tr><th>Name</th><th>Size</th><th></th></tr></thead>\n"
          "<tbody>\n";
  // Folders first, as file browsers list them.
  std::size_t shown = 0;
  for (const bool folders : {true, false}) {
    for (const auto& item : items) {
      if (item.is_directory != folders || shown == k_max_folder_entries) {
        continue;
      }
      ++shown;
      const std::string name = item.path.substr(item.path.rfind('/') + 1);
      const std::string encoded = url_path(item.path);
      if (item.is_directory) {
        body += fmt::format("<tr class=\"dir\"><td><a href=\"{}/tree/{}/{}\">{}/</a></td>"
                            "<td></td><td></td></tr>\n",
                            escape(view.base), escape(rev), escape(encoded), escape(name));
      } else {
        body += fmt::format(
            "<tr class=\"file\"><td><a href=\"{0}/blob/{1}/{2}\">{3}</a></td>"
            "<td class=\"num\" data-bytes=\"{4}\">{5}</td>"
            "<td><a class=\"download\" href=\"{0}/resolve/{1}/{2}\" download>download</a></td>"
            "</tr>\n",
            escape(view.base), escape(rev), escape(encoded), escape(name),
            item.lfs ? item.lfs->size : item.size,
            human_size(item.lfs ? item.lfs->size : item.size) + (item.lfs ? " · LFS" : ""));
      }
    }
  }
  if (items.empty()) {
    body += "<tr><td colspan=\"3\" class=\"muted\">empty</td></tr>\n";
  }
  body += "</tbody></table>\n";
  if (shown < items.size()) {
    body += fmt::format("<p class=\"muted\" id=\"truncated\">Only the first {} of {} entries "
                        "are shown.</p>\n",
                        shown, items.size());
  }
  if (path.empty()) {
    if (id.type == RepoType::kernel) {
      body += kernel_revision_html(view, at.commit, at.revision);
    }
    body += card_html(view, at.commit, at.revision);
  }
  const std::string title = fmt::format("{} at {}{}", id.id(), revision_label(at.revision),
                                        path.empty() ? "" : " · " + path);
  return html_response(page_html({title, repo_crumbs(view), body}));
}

HubExpected<HttpResponse> blob_page(handlers::Context& ctx, const RepoId& id,
                                    const std::string& revision, const std::string& path) {
  const RepoView view = KH_HUB_TRY(open_view(ctx, id));
  const Resolved at = KH_HUB_TRY(resolve(view, revision));
  KH_HUB_TRY(check_repo_path(path));
  const FileContent header =
      KH_HUB_TRY(read_file(view.repo.git, at.commit, path, Content::header));
  const std::string download = fmt::format("{}/resolve/{}/{}", view.base,
                                           url_part(at.revision), url_path(path));
  std::string body = repo_header(view, at.revision, Tab::files) + path_crumbs(view, at, path);
  if (header.lfs) {
    // The bytes are in the LFS store; the page says what the pointer says, as the Hub's does.
    body += fmt::format(
        "<p id=\"file-info\"><span data-bytes=\"{}\">{}</span> · stored with Git LFS · "
        "sha256 <code id=\"lfs-oid\">{}</code> · <a id=\"download\" href=\"{}\" "
        "download>download</a></p>\n<p class=\"muted\">This file is stored with Git LFS: its "
        "content is not shown here.</p>\n",
        header.lfs->size, human_size(header.lfs->size), header.lfs->oid, escape(download));
    const std::string title = fmt::format("{} · {} at {}", id.id(), path,
                                          revision_label(at.revision));
    return html_response(page_html({title, repo_crumbs(view), body}));
  }
  body += fmt::format(
      "<p id=\"file-info\"><span data-bytes=\"{}\">{}</span> · git blob <code>{}</code> · "
      "<a id=\"download\" href=\"{}\" download>download</a></p>\n",
      header.size, human_size(header.size), header.oid.substr(0, 12), escape(download));
  if (header.size > k_max_preview_bytes) {
    body += "<p class=\"muted\">This file is too large to show here.</p>\n";
  } else {
    const FileContent file =
        KH_HUB_TRY(read_file(view.repo.git, at.commit, path, Content::bytes));
    const std::string_view bytes(file.data, file.size);
    const std::string source =
        fmt::format("<pre id=\"file-text\"><code>{}</code></pre>\n", escape(bytes));
    if (!is_text(bytes)) {
      body += "<p class=\"muted\">Binary file: not shown.</p>\n";
    } else if (path.ends_with(".md")) {
      // Markdown reads rendered, as a card does, with its links relative to its own folder;
      // the source stays one click away without a script.
      const std::size_t slash = path.rfind('/');
      const std::string folder =
          slash == std::string::npos ? "" : "/" + url_path(path.substr(0, slash));
      const std::string rev = url_part(at.revision);
      const LinkBases bases{fmt::format("{}/blob/{}{}", view.base, rev, folder),
                            fmt::format("{}/resolve/{}{}", view.base, rev, folder)};
      const auto rendered = page_markdown(bytes, bases);
      if (rendered->refusal.empty()) {
        body += "<article class=\"card\" id=\"file-markdown\">\n" + rendered->html +
                "</article>\n<details><summary>Source</summary>\n" + source + "</details>\n";
      } else {
        // Past the renderer's bounds (markdown.hpp) the file is still shown, as text.
        body += fmt::format("<p class=\"muted\" id=\"markdown-refused\">Shown as text, not "
                            "rendered: {}.</p>\n",
                            escape(rendered->refusal)) +
                source;
      }
    } else {
      body += source;
    }
  }
  const std::string title = fmt::format("{} · {} at {}", id.id(), path,
                                        revision_label(at.revision));
  return html_response(page_html({title, repo_crumbs(view), body}));
}

HubExpected<HttpResponse> commits_page(handlers::Context& ctx, const RepoId& id,
                                       const std::string& revision) {
  const RepoView view = KH_HUB_TRY(open_view(ctx, id));
  const Resolved at = KH_HUB_TRY(resolve(view, revision));
  bool truncated = false;
  const auto commits = KH_HUB_TRY(
      list_commits(view.repo.git.get(), at.commit, k_commits_per_page, &truncated));
  std::string body = repo_header(view, at.revision, Tab::commits);
  body += fmt::format("<p class=\"muted\">History of <strong>{}</strong></p>\n",
                      escape(revision_label(at.revision)));
  body += "<table id=\"commits\"><thead><tr><th>Commit</th><th>Title</th><th>Author</th>"
          "<th>Date</th></tr></thead>\n<tbody>\n";
  for (const auto& commit : commits) {
    body += fmt::format(
        "<tr><td><a href=\"{}/commit/{}\"><code>{}</code></a></td><td>{}</td><td>{}</td>"
        "<td>{}</td></tr>\n",
        escape(view.base), commit.sha, commit.sha.substr(0, 12), escape(commit.title),
        escape(commit.author), utc_time(commit.time));
  }
  body += "</tbody></table>\n";
  if (truncated) {
    body += fmt::format("<p class=\"muted\">Only the newest {} commits are shown.</p>\n",
                        k_commits_per_page);
  }
  const std::string title = fmt::format("{} · commits of {}", id.id(),
                                        revision_label(at.revision));
  return html_response(page_html({title, repo_crumbs(view), body}));
}

HubExpected<HttpResponse> commit_page(handlers::Context& ctx, const RepoId& id,
                                      const std::string& revision) {
  const RepoView view = KH_HUB_TRY(open_view(ctx, id));
  const Resolved at = KH_HUB_TRY(resolve(view, revision));
  const auto entries = KH_HUB_TRY(list_commits(view.repo.git.get(), at.commit, 1));
  const auto parent = KH_HUB_TRY(first_parent(view.repo.git.get(), at.commit));
  const auto changes = KH_HUB_TRY(file_changes(view, parent, at.commit));
  std::string body = repo_header(view, at.commit, Tab::commits);
  const CommitLogEntry& entry = entries.front();
  body += fmt::format(
      "<h2 id=\"commit-title\">{}</h2>\n<p id=\"commit-info\"><code>{}</code> · {} · {}{}"
      " · <a href=\"{}/tree/{}\">browse files</a></p>\n",
      escape(entry.title), at.commit, escape(entry.author), utc_time(entry.time),
      parent ? fmt::format(" · parent <a href=\"{}/commit/{}\"><code>{}</code></a>",
                           escape(view.base), *parent, parent->substr(0, 12))
             : std::string(" · the first commit"),
      escape(view.base), at.commit);
  body += file_changes_html(view, changes, at.commit);
  const auto patch = commits_diff(view.repo.git.get(), parent, at.commit, k_max_page_diff);
  body += patch ? diff_html(*patch)
                : fmt::format("<p class=\"muted\">The diff cannot be shown: {}</p>\n",
                              escape(patch.error().message));
  const std::string title = fmt::format("{} · {} {}", id.id(), at.commit.substr(0, 12),
                                        entry.title);
  return html_response(page_html({title, repo_crumbs(view), body}));
}

HubExpected<HttpResponse> dispatch(handlers::Context& ctx, RepoType type, Segments segments) {
  // A trailing "/" (".../tree/v1/") names the same page.
  while (!segments.empty() && segments.back().empty()) {
    segments = segments.first(segments.size() - 1);
  }
  if (segments.size() < 2) {
    return hub_fail(404, "", "no such page");
  }
  const RepoId id = KH_HUB_TRY(make_repo_id(type, segments[0], segments[1]));
  if (segments.size() == 2) {
    return overview_page(ctx, id);
  }
  const std::string& action = segments[2];
  if (segments.size() >= 4 && action == "tree") {
    return tree_page(ctx, id, segments[3], join(segments.subspan(4)));
  }
  if (segments.size() >= 5 && action == "blob") {
    return blob_page(ctx, id, segments[3], join(segments.subspan(4)));
  }
  if (segments.size() == 4 && action == "commits") {
    return commits_page(ctx, id, segments[3]);
  }
  if (segments.size() == 4 && action == "commit") {
    return commit_page(ctx, id, segments[3]);
  }
  if (action == "discussions" && segments.size() <= 4) {
    const RepoView view = KH_HUB_TRY(open_view(ctx, id));
    return segments.size() == 3 ? discussions_page(ctx, view)
                                : discussion_page(ctx, view, segments[3]);
  }
  return hub_fail(404, "", "no such page");
}

}  // namespace

HubExpected<HttpResponse> route_page(handlers::Context& ctx, RepoType type, Segments segments) {
  if (ctx.request.method != "GET" && ctx.request.method != "HEAD") {
    return hub_fail(405, "", fmt::format("method {} is not allowed here", ctx.request.method));
  }
  auto response = dispatch(ctx, type, segments);
  // A browser gets an error as a page; the status and error headers stay the API's.
  return response ? std::move(*response) : error_page(response.error());
}

}  // namespace kernelhub::server::web
