// SPDX-License-Identifier: Apache-2.0
// `GET /`: a plain HTML page listing the kernels, their versions (`v<N>` branches) and the
// variants each version holds (`build/<variant>/` folders), for people browsing the server.
#include <regex>

#include <fmt/format.h>

#include <kernelhub/server/handlers.hpp>
#include <kernelhub/server/repository_reader.hpp>

namespace kernelhub::server::handlers {

namespace {

std::string escape_html(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

bool is_version_branch(const std::string& name) {
  static const std::regex k_version(R"(v[0-9]+)");
  return std::regex_match(name, k_version);
}

// One kernel's entry; empty for a private kernel the reader may not see (not even its name:
// the page must not tell which private repositories exist).
std::string kernel_section(Context& ctx, const RepoId& id) {
  auto repo = ctx.store.open(id);
  if (repo && repo->is_private && !has_valid_token(ctx)) {
    return "";
  }
  std::string html = fmt::format("<li><code>{}</code>", escape_html(id.id()));
  if (!repo) {
    return html + "</li>\n";
  }
  auto refs = list_refs(repo->git.get());
  if (!refs) {
    return html + "</li>\n";
  }
  html += "<ul>\n";
  bool any = false;
  for (const auto& branch : refs->branches) {
    if (!is_version_branch(branch.name)) {
      continue;
    }
    any = true;
    html += fmt::format("<li>{} <small>({})</small>: ", escape_html(branch.name),
                        branch.target_commit.substr(0, 12));
    auto variants =
        list_tree(repo->git.get(), branch.target_commit, "build", Recursive::no, Sizes::skip);
    std::string names;
    for (const auto& item : variants.value_or(std::vector<TreeItem>{})) {
      if (item.is_directory) {
        names += fmt::format("{}<code>{}</code>", names.empty() ? "" : ", ",
                             escape_html(item.path.substr(6)));
      }
    }
    html += (names.empty() ? "no variants" : names) + "</li>\n";
  }
  if (!any) {
    html += "<li>no version branches</li>\n";
  }
  return html + "</ul></li>\n";
}

}  // namespace

HubExpected<HttpResponse> index_page(Context& ctx) {
  std::string html =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>kernelhub</title></head>"
      "<body>\n<h1>kernelhub</h1>\n<h2>Kernels</h2>\n<ul>\n";
  bool any = false;
  for (const auto& id : ctx.store.list(RepoType::kernel)) {
    const std::string section = kernel_section(ctx, id);
    any = any || !section.empty();
    html += section;
  }
  if (!any) {
    html += "<li>no kernels yet</li>\n";
  }
  html += "</ul>\n</body></html>\n";
  HttpResponse response;
  response.content_type = "text/html; charset=utf-8";
  response.body = std::move(html);
  return response;
}

}  // namespace kernelhub::server::handlers
