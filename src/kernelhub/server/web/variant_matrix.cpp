// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/variant_matrix.hpp>

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/server/repository_reader.hpp>
#include <kernelhub/server/web/html.hpp>
#include <kernelhub/variants/variant_name.hpp>

namespace kernelhub::server::web {

namespace {

using nlohmann::json;

// metadata.json is a few hundred bytes; a larger one is not rendered.
constexpr std::uint64_t k_max_metadata = std::uint64_t{1} << 20;

void describe_name(VariantInfo& info) {
  const auto variant = variants::parse_variant(info.name);
  if (!variant) {
    info.framework = "unrecognised";
    info.compute = info.name;
    info.platform = "?";
    return;
  }
  info.parsed = true;
  const std::string version = variant->framework_version.to_string();
  info.framework_version = version;
  switch (variant->framework) {
    case variants::Framework::torch:
      info.framework = "torch " + version;
      info.framework_rank = 0;
      break;
    case variants::Framework::torch_stable_abi:
      info.framework = "torch stable ABI " + version;
      info.framework_rank = 1;
      info.stable_abi = true;
      break;
    case variants::Framework::tvm_ffi:
      info.framework = "tvm-ffi " + version;
      info.framework_rank = 2;
      break;
    case variants::Framework::torch_noarch:
      info.framework = "torch (any)";
      info.framework_rank = 3;
      break;
  }
  if (variant->is_arch()) {
    info.compute = variants::to_string(variant->backend);
    info.backend = std::string(types::to_string(variant->backend.kind));
    info.platform = variant->cpu + "-" + variant->os;
  } else {
    info.compute = variant->noarch_backend;
    info.backend = variant->noarch_backend;
    info.platform = "any";
  }
}

void read_metadata(VariantInfo& info, std::string_view text) {
  const json doc = json::parse(text, nullptr, false);
  if (!doc.is_object()) {
    info.metadata_error = "metadata.json is not a JSON object";
    return;
  }
  if (const auto it = doc.find("license"); it != doc.end() && it->is_string()) {
    info.license = it->get<std::string>();
  }
  if (const auto backend = doc.find("backend"); backend != doc.end() && backend->is_object()) {
    if (const auto archs = backend->find("archs"); archs != backend->end() && archs->is_array()) {
      for (const auto& arch : *archs) {
        if (arch.is_string()) {
          info.archs.push_back(arch.get<std::string>());
        }
      }
    }
  }
  if (const auto digest = doc.find("digest"); digest != doc.end() && digest->is_object()) {
    const auto algorithm = digest->find("algorithm");
    const auto files = digest->find("files");
    info.digest = fmt::format(
        "{} over {} files",
        algorithm != digest->end() && algorithm->is_string() ? algorithm->get<std::string>()
                                                             : "unknown",
        files != digest->end() && files->is_object() ? files->size() : 0);
  }
}

std::string variant_link(const VariantInfo& info, const std::string& tree_base,
                         std::string_view label) {
  return fmt::format("<a href=\"{}/build/{}\" title=\"{}\">{}</a>", escape(tree_base),
                     escape(url_part(info.name)), escape(info.name), escape(label));
}

}  // namespace

HubExpected<std::vector<VariantInfo>> collect_variants(const std::shared_ptr<git_repository>& repo,
                                                       const std::string& commit) {
  auto folders = list_tree(repo.get(), commit, "build", Recursive::no, Sizes::skip);
  if (!folders) {
    if (folders.error().status == 404) {
      return std::vector<VariantInfo>{};
    }
    return tl::unexpected(folders.error());
  }
  std::vector<VariantInfo> variants;
  for (const auto& folder : *folders) {
    if (!folder.is_directory) {
      continue;
    }
    VariantInfo info;
    info.name = folder.path.substr(folder.path.rfind('/') + 1);
    describe_name(info);
    auto files = list_tree(repo.get(), commit, folder.path, Recursive::no, Sizes::skip);
    bool has_metadata = false;
    for (const auto& file : files.value_or(std::vector<TreeItem>{})) {
      has_metadata = has_metadata || file.path == folder.path + "/metadata.json";
      info.signed_ = info.signed_ || file.path == folder.path + "/metadata.json.sigstore";
    }
    if (!has_metadata) {
      info.metadata_error = "no metadata.json";
    } else if (auto header = read_file(repo, commit, folder.path + "/metadata.json",
                                       Content::header);
               header && header->size > k_max_metadata) {
      info.metadata_error = "metadata.json is too large to show";
    } else if (auto file = read_file(repo, commit, folder.path + "/metadata.json",
                                     Content::bytes)) {
      read_metadata(info, std::string_view(file->data, file->size));
    } else {
      info.metadata_error = file.error().message;
    }
    variants.push_back(std::move(info));
  }
  std::sort(variants.begin(), variants.end(),
            [](const VariantInfo& a, const VariantInfo& b) { return a.name < b.name; });
  return variants;
}

std::vector<std::string> backends_of(const std::vector<VariantInfo>& variants) {
  std::set<std::string> names;
  for (const auto& variant : variants) {
    if (!variant.backend.empty()) {
      names.insert(variant.backend);
    }
  }
  return {names.begin(), names.end()};
}

std::string render_variant_matrix(const std::vector<VariantInfo>& variants,
                                  const std::string& tree_base) {
  if (variants.empty()) {
    return "<p class=\"muted\">This revision has no build variants (no <code>build/</code> "
           "folder).</p>\n";
  }
  // Rows by framework, the newest version first: what a reader looks for.
  std::vector<const VariantInfo*> row_heads;
  std::vector<std::string> columns;
  std::map<std::pair<std::string, std::string>, std::vector<const VariantInfo*>> cells;
  for (const auto& variant : variants) {
    if (std::none_of(row_heads.begin(), row_heads.end(), [&](const VariantInfo* head) {
          return head->framework == variant.framework;
        })) {
      row_heads.push_back(&variant);
    }
    if (std::find(columns.begin(), columns.end(), variant.compute) == columns.end()) {
      columns.push_back(variant.compute);
    }
    cells[{variant.framework, variant.compute}].push_back(&variant);
  }
  std::sort(row_heads.begin(), row_heads.end(), [](const VariantInfo* a, const VariantInfo* b) {
    if (a->framework_rank != b->framework_rank) {
      return a->framework_rank < b->framework_rank;
    }
    const auto va = variants::ReleaseVersion::parse(a->framework_version);
    const auto vb = variants::ReleaseVersion::parse(b->framework_version);
    if (va && vb && *va != *vb) {
      return *va > *vb;
    }
    return a->framework < b->framework;
  });
  std::vector<std::string> rows;
  for (const VariantInfo* head : row_heads) {
    rows.push_back(head->framework);
  }
  std::sort(columns.begin(), columns.end());

  std::string html = "<table class=\"matrix\" id=\"variant-matrix\">\n<thead><tr><th>Framework</th>";
  for (const auto& column : columns) {
    html += fmt::format("<th scope=\"col\">{}</th>", escape(column));
  }
  html += "</tr></thead>\n<tbody>\n";
  for (const auto& row : rows) {
    html += fmt::format("<tr><th scope=\"row\">{}</th>", escape(row));
    for (const auto& column : columns) {
      html += "<td>";
      const auto it = cells.find({row, column});
      if (it != cells.end()) {
        for (const VariantInfo* variant : it->second) {
          html += fmt::format("<span class=\"chip\">{}</span>",
                              variant_link(*variant, tree_base, variant->platform));
        }
      }
      html += "</td>";
    }
    html += "</tr>\n";
  }
  html += "</tbody></table>\n";

  html += "<table class=\"variants\" id=\"variant-details\">\n<thead><tr><th>Variant</th>"
          "<th>Archs</th><th>Stable ABI</th><th>Digest</th><th>Signed</th></tr></thead>\n"
          "<tbody>\n";
  for (const auto& variant : variants) {
    std::string archs;
    for (const auto& arch : variant.archs) {
      archs += fmt::format("<span class=\"chip\">{}</span>", escape(arch));
    }
    if (archs.empty()) {
      archs = "<span class=\"muted\">—</span>";
    }
    const std::string digest =
        !variant.metadata_error.empty()
            ? fmt::format("<span class=\"muted\">{}</span>", escape(variant.metadata_error))
            : (variant.digest.empty() ? "<span class=\"muted\">none</span>"
                                      : escape(variant.digest));
    html += fmt::format(
        "<tr data-variant=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        escape(variant.name), variant_link(variant, tree_base, variant.name), archs,
        variant.stable_abi ? "yes" : "no", digest, variant.signed_ ? "yes" : "no");
  }
  return html + "</tbody></table>\n";
}

}  // namespace kernelhub::server::web
