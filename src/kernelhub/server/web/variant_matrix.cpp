// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/variant_matrix.hpp>

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/server/repository_reader.hpp>
#include <kernelhub/server/variant_check_store.hpp>
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

constexpr std::string_view k_verifying =
    "<span class=\"muted verifying\">verifying (the hub checks it after the upload)</span>";

// A signed variant whose signature holds but whose files do not match the signed digest:
// the files changed after signing (the loader refuses it).
bool changed_after_signing(const VariantInfo& variant) {
  return variant.integrity.signature_valid == true && variant.integrity.digest_matches == false;
}

std::string digest_cell(const VariantInfo& variant) {
  if (!variant.metadata_error.empty()) {
    return fmt::format("<span class=\"muted\">{}</span>", escape(variant.metadata_error));
  }
  if (variant.digest.empty()) {
    return "<span class=\"muted\">none</span>";
  }
  const auto& integrity = variant.integrity;
  switch (variant.checked) {
    case VariantInfo::Checked::no:
      return escape(variant.digest);
    case VariantInfo::Checked::verifying:
      return escape(variant.digest) + ": " + std::string(k_verifying);
    case VariantInfo::Checked::at_upload:
    case VariantInfo::Checked::on_first_view:
      break;
  }
  if (integrity.digest_matches == true) {
    return escape(variant.digest) + ": <span class=\"verified\">files match</span>";
  }
  if (integrity.digest_matches == false) {
    return escape(variant.digest) + fmt::format(
        ": <span class=\"error mismatch\">files do not match: {}</span>",
        escape(integrity.digest_detail));
  }
  return escape(variant.digest) +
         fmt::format(": <span class=\"muted\">{}</span>", escape(integrity.digest_detail));
}

std::string signature_cell(const VariantInfo& variant) {
  const auto& integrity = variant.integrity;
  if (!variant.signed_) {
    return "no";
  }
  switch (variant.checked) {
    case VariantInfo::Checked::no:
      return "yes";
    case VariantInfo::Checked::verifying:
      return "yes: " + std::string(k_verifying);
    case VariantInfo::Checked::at_upload:
    case VariantInfo::Checked::on_first_view:
      break;
  }
  if (changed_after_signing(variant)) {
    return fmt::format("<span class=\"error mismatch\">valid ({}), but the files changed after "
                       "signing</span>",
                       escape(integrity.signature_detail));
  }
  if (integrity.signature_valid == true) {
    return fmt::format("<span class=\"verified\">valid</span> ({})",
                       escape(integrity.signature_detail));
  }
  return fmt::format("<span class=\"error mismatch\">not valid: {}</span>",
                     escape(integrity.signature_detail));
}

std::string checked_cell(const VariantInfo& variant, const std::string& repo_base) {
  std::string cell;
  switch (variant.checked) {
    case VariantInfo::Checked::no:
      return "<span class=\"muted\">—</span>";
    case VariantInfo::Checked::verifying:
      return "<span class=\"muted verifying\">verifying</span>";
    case VariantInfo::Checked::at_upload:
      cell = fmt::format("at upload (<a href=\"{}/commit/{}\">{}</a>)", escape(repo_base),
                         escape(url_part(variant.checked_commit)),
                         escape(variant.checked_commit.substr(0, 12)));
      break;
    case VariantInfo::Checked::on_first_view:
      cell = "when first shown";
      break;
  }
  if (variant.signature_rechecked) {
    cell += "; signature checked again: the hub's keys changed since";
  }
  return cell;
}

// Records whose checks ran before the hub's keys changed keep their digest result (no key
// is involved) and get their signature checked against the keys in force.
void apply_record(const std::shared_ptr<git_repository>& repo, const std::string& commit,
                  VariantInfo& info, VariantCheckRecord record,
                  std::span<const PublishedKey> keys) {
  info.checked = record.origin == VariantCheckRecord::Origin::upload
                     ? VariantInfo::Checked::at_upload
                     : VariantInfo::Checked::on_first_view;
  info.checked_commit = record.commit;
  info.integrity = std::move(record.integrity);
  if (record.keys != key_hints(keys) && info.integrity.signed_) {
    check_variant_signature(repo, commit, "build/" + info.name, parse_published_keys(keys),
                            info.integrity);
    info.signature_rechecked = true;
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
    info.tree = folder.oid;
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

void check_variants(const std::shared_ptr<git_repository>& repo, const std::string& commit,
                    std::vector<VariantInfo>& variants, std::span<const PublishedKey> keys,
                    bool verifying, Fallback fallback) {
  const VariantCheckStore store(repository_folder(repo.get()));
  std::optional<std::vector<verify::TrustedKey>> trusted;
  for (VariantInfo& info : variants) {
    if (auto record = store.find(info.tree)) {
      apply_record(repo, commit, info, std::move(*record), keys);
      continue;
    }
    if (verifying) {
      info.checked = VariantInfo::Checked::verifying;
      continue;
    }
    if (fallback == Fallback::none) {
      continue;
    }
    if (!trusted) {
      trusted = parse_published_keys(keys);
    }
    auto integrity = check_variant_integrity(repo, commit, "build/" + info.name, *trusted);
    if (!integrity) {
      continue;
    }
    info.checked = VariantInfo::Checked::on_first_view;
    info.checked_commit = commit;
    info.integrity = *integrity;
    // Kept, so the next view (and a restart) reads it instead of hashing again; a record that
    // cannot be written only costs that.
    (void)store.save({info.tree, commit, VariantCheckRecord::Origin::page_view, key_hints(keys),
                      std::move(*integrity)});
  }
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
                                  const std::string& repo_base, const std::string& tree_base) {
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

  // Files that no longer match their digest are named above the table, not only in a cell.
  std::string mismatched;
  for (const auto& variant : variants) {
    if (variant.integrity.digest_matches == false) {
      mismatched += fmt::format("{}<code>{}</code>{}", mismatched.empty() ? "" : ", ",
                                escape(variant.name),
                                changed_after_signing(variant) ? " (changed after signing)" : "");
    }
  }
  if (!mismatched.empty()) {
    html += "<p class=\"error mismatch\" id=\"variant-mismatch\">Files do not match the digest "
            "in their metadata.json, so loaders refuse these variants: " +
            mismatched + ".</p>\n";
  }
  html += "<table class=\"variants\" id=\"variant-details\">\n<thead><tr><th>Variant</th>"
          "<th>Archs</th><th>Stable ABI</th><th>Digest</th><th>Signed</th>"
          "<th>Checked by the hub</th></tr></thead>\n<tbody>\n";
  for (const auto& variant : variants) {
    std::string archs;
    for (const auto& arch : variant.archs) {
      archs += fmt::format("<span class=\"chip\">{}</span>", escape(arch));
    }
    if (archs.empty()) {
      archs = "<span class=\"muted\">—</span>";
    }
    html += fmt::format(
        "<tr data-variant=\"{}\"{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td></tr>\n",
        escape(variant.name),
        variant.integrity.digest_matches == false ? " class=\"mismatch\"" : "",
        variant_link(variant, tree_base, variant.name), archs, variant.stable_abi ? "yes" : "no",
        digest_cell(variant), signature_cell(variant), checked_cell(variant, repo_base));
  }
  return html + "</tbody></table>\n";
}

}  // namespace kernelhub::server::web
