// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/variant_matrix.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/metadata/digest.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>
#include <kernelhub/server/lfs_object_store.hpp>
#include <kernelhub/server/repository_blob_reader.hpp>
#include <kernelhub/server/repository_reader.hpp>
#include <kernelhub/server/web/html.hpp>
#include <kernelhub/util/unique_fd.hpp>
#include <kernelhub/variants/variant_name.hpp>
#include <kernelhub/verify/identity_policy.hpp>
#include <kernelhub/verify/signed_variant.hpp>
#include <kernelhub/verify/trusted_root.hpp>

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

// A variant with more files than this is not checked on a page view.
constexpr std::size_t k_max_checked_files = 10000;
// Remembered blob hashes; past this many the memory starts again empty.
constexpr std::size_t k_remembered_hashes = 100000;

// A blob's hash in `algorithm`, remembered by blob id (a blob never changes under its id):
// streamed from a loose object, else read whole through libgit2.
HubExpected<std::string> blob_hash(const std::shared_ptr<git_repository>& repo,
                                   const std::string& commit, const TreeItem& item,
                                   metadata::DigestAlgorithm algorithm) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::string> remembered;
  const std::string key = std::string(metadata::to_string(algorithm)) + ":" + item.oid;
  {
    const std::lock_guard lock(mutex);
    if (const auto found = remembered.find(key); found != remembered.end()) {
      return found->second;
    }
  }
  metadata::StreamHasher hasher(algorithm);
  // An LFS file's content is its object in the repository's LFS store, not the pointer blob.
  if (item.lfs) {
    const LfsObjectStore store(repository_folder(repo.get()));
    const util::UniqueFd fd(::open(store.object_path(item.lfs->oid).c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
      return hub_fail(404, "", fmt::format("the LFS object of \"{}\" is not stored", item.path));
    }
    std::string buffer(std::size_t{1} << 20, '\0');
    for (;;) {
      const ssize_t got = ::read(fd.get(), buffer.data(), buffer.size());
      if (got < 0 && errno == EINTR) {
        continue;
      }
      if (got < 0) {
        return hub_fail(500, "", fmt::format("cannot read the LFS object of \"{}\"", item.path));
      }
      if (got == 0) {
        break;
      }
      hasher.update(std::string_view(buffer.data(), static_cast<std::size_t>(got)));
    }
    std::string hash = hasher.finish();
    const std::lock_guard lock(mutex);
    remembered.emplace(key, hash);
    return hash;
  }
  auto reader = open_streamed_blob(repo.get(), item.oid);
  if (!reader) {
    return tl::unexpected(reader.error());
  }
  if (*reader) {
    std::string buffer(std::size_t{1} << 20, '\0');
    for (;;) {
      auto got = (*reader)->read(buffer.data(), buffer.size());
      if (!got) {
        return tl::unexpected(got.error());
      }
      if (*got == 0) {
        break;
      }
      hasher.update(std::string_view(buffer.data(), *got));
    }
  } else {
    auto file = read_file(repo, commit, item.path, Content::bytes);
    if (!file) {
      return tl::unexpected(file.error());
    }
    hasher.update(std::string_view(file->data, file->size));
  }
  std::string hash = hasher.finish();
  const std::lock_guard lock(mutex);
  if (remembered.size() >= k_remembered_hashes) {
    remembered.clear();
  }
  remembered.emplace(key, hash);
  return hash;
}

// The loader's digest leaves out bytecode and the top-level metadata files (metadata/digest.hpp).
bool outside_digest(std::string_view relative) {
  if (relative == "metadata.json" || relative == "metadata.json.sigstore" ||
      relative.ends_with(".pyc") || relative.starts_with("__pycache__/")) {
    return true;
  }
  return relative.find("/__pycache__/") != std::string_view::npos;
}

std::string first_violations(const std::vector<metadata::DigestViolation>& violations) {
  std::string out = violations.front().to_string();
  if (violations.size() > 1) {
    out += fmt::format(" (and {} more)", violations.size() - 1);
  }
  return out;
}

void check_digest(const std::shared_ptr<git_repository>& repo, const std::string& commit,
                  const std::string& folder, const metadata::Digest& expected,
                  VariantInfo::Integrity& integrity) {
  // Sizes::read also tells LFS pointers from regular files.
  auto items = list_tree(repo.get(), commit, folder, Recursive::yes, Sizes::read);
  if (!items) {
    integrity.digest_detail = "the files cannot be listed: " + items.error().message;
    return;
  }
  if (items->size() > k_max_checked_files) {
    integrity.digest_detail = fmt::format("not checked here: more than {} files",
                                          k_max_checked_files);
    return;
  }
  metadata::Digest actual;
  actual.algorithm = expected.algorithm;
  for (const TreeItem& item : *items) {
    const std::string_view relative = std::string_view(item.path).substr(folder.size() + 1);
    if (item.is_directory || outside_digest(relative)) {
      continue;
    }
    auto hash = blob_hash(repo, commit, item, expected.algorithm);
    if (!hash) {
      integrity.digest_detail = fmt::format("\"{}\" cannot be read: {}", relative,
                                            hash.error().message);
      return;
    }
    actual.files.emplace(relative, std::move(*hash));
  }
  const auto violations = metadata::validate(expected, actual);
  integrity.digest_matches = violations.empty();
  if (!violations.empty()) {
    integrity.digest_detail = first_violations(violations);
  }
}

void check_variant(const std::shared_ptr<git_repository>& repo, const std::string& commit,
                   VariantInfo& info, std::span<const verify::TrustedKey> keys) {
  VariantInfo::Integrity& integrity = info.integrity;
  integrity.checked = true;
  const std::string folder = "build/" + info.name;
  if (!info.metadata_error.empty()) {
    integrity.digest_detail = info.metadata_error;
    return;
  }
  auto metadata_file = read_file(repo, commit, folder + "/metadata.json", Content::bytes);
  if (!metadata_file) {
    integrity.digest_detail = metadata_file.error().message;
    return;
  }
  const std::string_view metadata_bytes(metadata_file->data, metadata_file->size);
  if (auto parsed = metadata::parse_metadata(metadata_bytes); !parsed) {
    integrity.digest_detail = "metadata.json does not parse: " + parsed.error().message;
  } else if (parsed->digest) {
    check_digest(repo, commit, folder, *parsed->digest, integrity);
  }
  if (!info.signed_) {
    return;
  }
  auto bundle = read_file(repo, commit, folder + "/metadata.json.sigstore", Content::bytes);
  if (!bundle || bundle->size > k_max_metadata) {
    integrity.signature_valid = false;
    integrity.signature_detail = bundle ? "metadata.json.sigstore is too large"
                                        : bundle.error().message;
    return;
  }
  const auto check = verify::verify_metadata_signature(
      std::string_view(bundle->data, bundle->size), metadata_bytes, verify::default_policies(),
      verify::production_trusted_root(), keys);
  integrity.signature_valid = check.passed();
  if (check.passed()) {
    integrity.signature_detail = check.key_hint.empty() ? "Sigstore, kernels-community workflow"
                                                        : "key " + check.key_hint;
  } else {
    integrity.signature_detail = fmt::format("{}: {}", verify::kind_name(check.status),
                                             check.reason);
  }
}

std::string digest_cell(const VariantInfo& variant) {
  if (!variant.metadata_error.empty()) {
    return fmt::format("<span class=\"muted\">{}</span>", escape(variant.metadata_error));
  }
  if (variant.digest.empty()) {
    return "<span class=\"muted\">none</span>";
  }
  const auto& integrity = variant.integrity;
  if (!integrity.checked) {
    return escape(variant.digest);
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
  if (!integrity.checked) {
    return "yes";
  }
  if (integrity.signature_valid == true) {
    return fmt::format("<span class=\"verified\">valid</span> ({})",
                       escape(integrity.signature_detail));
  }
  return fmt::format("<span class=\"error mismatch\">not valid: {}</span>",
                     escape(integrity.signature_detail));
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

void check_variants(const std::shared_ptr<git_repository>& repo, const std::string& commit,
                    std::vector<VariantInfo>& variants, std::span<const verify::TrustedKey> keys) {
  for (VariantInfo& info : variants) {
    check_variant(repo, commit, info, keys);
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
    html += fmt::format(
        "<tr data-variant=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        escape(variant.name), variant_link(variant, tree_base, variant.name), archs,
        variant.stable_abi ? "yes" : "no", digest_cell(variant), signature_cell(variant));
  }
  return html + "</tbody></table>\n";
}

}  // namespace kernelhub::server::web
