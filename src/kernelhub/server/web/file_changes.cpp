// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/file_changes.hpp>

#include <map>

#include <fmt/format.h>

#include <kernelhub/server/web/html.hpp>

namespace kernelhub::server::web {

HubExpected<std::vector<FileChange>> file_changes(const RepoView& view,
                                                  const std::optional<std::string>& before,
                                                  const std::string& after) {
  std::map<std::string, FileChange> changes;
  if (before) {
    const auto old_items =
        KH_HUB_TRY(list_tree(view.repo.git.get(), *before, "", Recursive::yes, Sizes::read));
    for (const auto& item : old_items) {
      if (!item.is_directory) {
        changes[item.path] = {item.path, item, std::nullopt};
      }
    }
  }
  const auto new_items =
      KH_HUB_TRY(list_tree(view.repo.git.get(), after, "", Recursive::yes, Sizes::read));
  for (const auto& item : new_items) {
    if (item.is_directory) {
      continue;
    }
    auto& change = changes[item.path];
    change.path = item.path;
    change.after = item;
  }
  std::vector<FileChange> out;
  for (auto& [path, change] : changes) {
    if (!change.before || !change.after || change.before->oid != change.after->oid) {
      out.push_back(std::move(change));
    }
  }
  return out;
}

std::string file_changes_html(const RepoView& view, const std::vector<FileChange>& changes,
                              const std::string& after_revision) {
  std::string html = fmt::format(
      "<h2 id=\"files-changed\">Files changed ({})</h2>\n<table id=\"changes\"><thead><tr>"
      "<th>File</th><th>Change</th><th>Before</th><th>After</th></tr></thead>\n<tbody>\n",
      changes.size());
  for (const auto& change : changes) {
    const char* kind = !change.before ? "added" : (!change.after ? "deleted" : "modified");
    const std::string name =
        change.after ? fmt::format("<a href=\"{}/blob/{}/{}\">{}</a>", escape(view.base),
                                   escape(url_part(after_revision)),
                                   escape(url_path(change.path)), escape(change.path))
                     : escape(change.path);
    const auto size = [](const std::optional<TreeItem>& item) {
      return item ? fmt::format("<span data-bytes=\"{}\">{}</span>", item->size,
                                human_size(item->size))
                  : std::string("<span class=\"muted\">—</span>");
    };
    html += fmt::format(
        "<tr class=\"{0}\"><td>{1}</td><td>{0}</td><td class=\"num\">{2}</td>"
        "<td class=\"num\">{3}</td></tr>\n",
        kind, name, size(change.before), size(change.after));
  }
  if (changes.empty()) {
    html += "<tr><td colspan=\"4\" class=\"muted\">no file changes</td></tr>\n";
  }
  return html + "</tbody></table>\n";
}

}  // namespace kernelhub::server::web
